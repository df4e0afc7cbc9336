"""Source data for the legal loopback fakes: a few federal opinions around 2026-07-02 and a
small slice of the CFR (titles 17 and 40), with the LLM's reply for each section. The tests
and `needle serve sources legal` serve it; its dates are absolute, so a generator run against
it pins the clock to ``NOW`` (``NEEDLE_NOW``)."""

from __future__ import annotations

from datetime import UTC, datetime

from needle_lib.jsonio import JSONObject
from needle_lib.testing.legal_sources import (
    FakeLegalSources,
    opinion_record,
    section_xml,
    structure_node,
)

NOW = datetime(2026, 7, 2, 14, 25, tzinfo=UTC)


def cases() -> list[JSONObject]:
    unusable = opinion_record(104, "ca9", "Orphan v. Record", "2026-06-02", docket="25-9")
    unusable["caseName"] = ""
    return [
        opinion_record(101, "ca9", "Fresh Mix, LLC v. Pisanelli Bice PLLC", "2026-06-12",
                       docket="25-2462", citations=("89 F.4th 1188",)),
        opinion_record(102, "ca9", "United States v. Doe", "2026-06-03", docket="24-1000"),
        unusable,
        opinion_record(103, "ca9", "Alvarez v. Coastal Freight Lines, Inc.", "2026-05-20",
                       docket="24-3001"),
        opinion_record(105, "ca9", "Nguyen v. Garland", "2026-04-08", docket="23-4410",
                       citations=("90 F.4th 12",)),
        opinion_record(106, "ca9", "Pacific Timber Co. v. Oregon Dep't of Forestry",
                       "2026-02-10", docket="25-1111"),
        opinion_record(107, "ca9", "Too Old v. Window", "2024-12-30", docket="24-77"),
        opinion_record(201, "scotus", "Loper Bright Enterprises v. Raimondo", "2026-06-28",
                       docket="22-451", citations=("603 U.S. 369", "144 S. Ct. 2244")),
        opinion_record(202, "scotus", "Harrow v. Department of Defense", "2026-05-16",
                       docket="23-21", citations=("601 U.S. 480",)),
        opinion_record(301, "cafc", "Ingenico Inc. v. IOENGINE, LLC", "2026-06-05",
                       docket="2023-1367"),
        opinion_record(401, "ca1", "Current Month v. Excluded", "2026-07-01", docket="26-1"),
    ]


FRAUD = ("It shall be unlawful for any person, directly or indirectly, by the use of any means "
         "or instrumentality of interstate commerce, or of the mails or of any facility of any "
         "national securities exchange,")
SECTIONS = {
    # (title, part, identifier, heading): (paragraphs, LLM reply)
    (17, "240", "240.10b-5", "Employment of manipulative and deceptive devices."): (
        [FRAUD, "(a) To employ any device, scheme, or artifice to defraud,",
         "(b) To make any untrue statement of a material fact or to omit to state a material "
         "fact necessary in order to make the statements made not misleading."],
        'securities fraud "scheme, or artifice to defraud" untrue statement rule'),
    (17, "240", "240.10b5-1", "Trading on the basis of material nonpublic information."): (
        ["The manipulative and deceptive devices prohibited by the Act include the purchase or "
         "sale of a security of any issuer on the basis of material nonpublic information "
         "about that security or issuer, in breach of a duty of trust or confidence."],
        'part 240 insider "material nonpublic information" trading plan'),
    (17, "240", "240.12b-2", "Definitions."): (
        ["The following terms, when used in the rules contained in this regulation, shall "
         "have the respective meanings indicated in this rule unless the context otherwise "
         "requires, including affiliate, amount, associate and control."],
        "NO_DISTINCT_QUERY"),
    (17, "240", "240.13a-1", "Requirements of annual reports."): (
        ["Every issuer having securities registered pursuant to the Act shall file an annual "
         "report on the appropriate form authorized or prescribed therefor for each fiscal "
         "year after the last full fiscal year for which financial statements were filed, "
         "within the period specified in the appropriate form."],
        'issuer annual report deadline "within the period specified" fiscal year'),
    (17, "240", "240.14a-8", "Shareholder proposals."): (
        ["This section addresses when a company must include a shareholder's proposal in its "
         "proxy statement and identify the proposal in its form of proxy when the company "
         "holds an annual or special meeting of shareholders."],
        'shareholder proposal "poison pill ban" proxy statement'),
    (17, "240", "240.15c3-3", "Customer protection."): (
        ["Reserves and custody."], "broker custody rule"),
    (40, "60", "60.1", "Applicability."): (
        ["Except as provided in subparts B and C, the provisions of this part apply to the "
         "owner or operator of any stationary source which contains an affected facility, "
         "the construction or modification of which is commenced after the date of "
         "publication in this part of any standard applicable to that facility."],
        'new source performance standards "owner or operator of any stationary source"'),
    (40, "60", "60.2", "Definitions of terms."): (
        ["The terms used in this part are defined in the Act or in this section as follows: "
         "Administrator means the Administrator of the Environmental Protection Agency or "
         "his authorized representative, and affected facility means any apparatus."],
        'stationary source definitions 40 CFR "affected facility means any apparatus"'),
}


def _structure(title: int, parts: dict[str, list[JSONObject]]) -> JSONObject:
    part_nodes = [structure_node("part", part, f"Part {part} rules", children=children)
                  for part, children in parts.items()]
    part_nodes.append(structure_node("part", "299", "Reserved part", reserved=True, children=[
        structure_node("section", "299.1", "Never to be sampled")]))
    chapter = structure_node("chapter", "I", "Agency", children=part_nodes)
    return structure_node("title", str(title), f"Title {title}", children=[chapter])


def structures() -> dict[int, JSONObject]:
    by_title: dict[int, dict[str, list[JSONObject]]] = {}
    for title, part, identifier, heading in SECTIONS:
        by_title.setdefault(title, {}).setdefault(part, []).append(
            structure_node("section", identifier, heading))
    by_title[17]["240"] += [
        structure_node("section", "240.3a-1", "[Reserved]", reserved=True),
        structure_node("section", "240.3b-1", ""),  # unlabelled: skipped
        structure_node("appendix", "Appendix A to Part 240", "Forms"),
    ]
    return {title: _structure(title, parts) for title, parts in by_title.items()}


def sections() -> dict[tuple[int, str], str]:
    return {(title, identifier): section_xml(part, identifier, heading, paragraphs)
            for (title, part, identifier, heading), (paragraphs, _) in SECTIONS.items()}


def llm_replies() -> dict[str, str]:
    return {heading: reply for (_, _, _, heading), (_, reply) in SECTIONS.items()}


TITLES: list[JSONObject] = [
    {"number": 17, "name": "Commodity and Securities Exchanges", "latest_amended_on":
     "2026-06-20", "latest_issue_date": "2026-06-20", "up_to_date_as_of": "2026-06-30",
     "reserved": False},
    {"number": 35, "name": "[Reserved]", "latest_amended_on": None, "latest_issue_date": None,
     "up_to_date_as_of": None, "reserved": True},
    {"number": 40, "name": "Protection of Environment", "latest_amended_on": "2026-06-25",
     "latest_issue_date": "2026-06-25", "up_to_date_as_of": "2026-06-30", "reserved": False},
]


def fake_sources(port: int = 0) -> FakeLegalSources:
    """The fake serving this world (``port`` 0: any free port)."""
    return FakeLegalSources.on_port(port)(cases=cases(), titles=TITLES, structures=structures(),
                                          sections=sections(), llm_replies=llm_replies())
