"""A small scholar corpus for the loopback fake: the tests generate from it, and `needle
serve sources scholar` serves it (dated from the moment it starts).

Each paper exercises one path of generation: kept (A1, A3, A5, A7, E1, E2), dropped by one
bucket's check (A2: a tot with a decimal; A6: a body detail that is in the abstract), no
full text (A4), a generic title (G), a cross-listed paper (A3: primary math, listed under
cs too), a Europe PMC record without a PMID (E2: NCBI's converter knows it), an LLM error
(E3). The tests fix ``NOW``: the fake dates papers from it and generation windows from it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from needle_lib.testing.scholar_sources import FakePaper

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

A1 = FakePaper(
    "arxiv", "Tidal Lexicons: Tracking Dialect Drift in Coastal Radio Transcripts",
    "We study how regional vocabulary changes across decades of broadcast speech and show "
    "that lexical drift is faster in fishing communities than in inland towns.",
    ("Our recordings come from the Skerryvore harbour archive, a collection of evening "
     "shipping bulletins digitised by volunteers over three decades.",
     "Annotators marked every occurrence of the word haar, a local term for sea fog, and "
     "matched it against the Lowland phonetic gazetteer."),
    age_days=2, arxiv="2611.01234", categories=("cs.CL",),
    answers={
        "body": "skerryvore harbour archive shipping bulletins",
        "clue": "which study counted the word haar for sea fog in digitised evening shipping "
                "bulletins from a harbour archive?",
        "tot": "I think there was a paper about old radio weather broadcasts showing that "
               "words in seaside villages changed faster than in towns further inland",
    })
A2 = FakePaper(
    "arxiv", "Sparse Gradient Pruning for Low-Power Wearable Accelerometers",
    "We prune gradient updates on wrist-worn sensors and keep recognition accuracy while "
    "halving energy use.",
    ("Training ran on the Kestrel microcontroller board powered by a coin cell battery.",
     "Participants wore the band during dishwashing, cycling and stair climbing sessions."),
    age_days=3, arxiv="2611.02345", categories=("cs.LG",),
    answers={
        "body": "kestrel microcontroller coin cell battery",
        "clue": "which paper trained activity recognition on a kestrel microcontroller with a "
                "coin cell battery during dishwashing and cycling?",
        "tot": "something about shrinking training updates on a wristband so it uses about 0.5 "
               "of the energy while still recognising activities well",
    })
A3 = FakePaper(
    "arxiv", "Random Walks on Hyperbolic Honeycombs and Their Return Probabilities",
    "We bound the probability that a simple random walk returns to its starting cell on "
    "regular tilings of hyperbolic space.",
    ("Simulations used the Poincaré ball with seven million sampled trajectories on the "
     "order-5 dodecahedral tiling.",
     "Escape rates were compared with the spectral radius of the Coxeter group."),
    age_days=4, arxiv="2611.03456", categories=("math.PR", "cs.LG"),
    answers={
        "body": "order-5 dodecahedral tiling poincare ball simulations",
        "clue": "what escape rates did simulations of trajectories on the order-5 dodecahedral "
                "tiling in the poincare ball give?",
        "tot": "there was this maths preprint about wandering particles in curved geometric "
               "space where coming back home turns out to be quite unlikely",
    })
A4 = FakePaper(
    "arxiv", "Depth-Aware Segmentation of Underwater Coral Imagery", "We segment coral reefs.",
    ("Divers photographed the reef.",), age_days=15, arxiv="2611.04567",
    categories=("cs.CV",), html=False)
A5 = FakePaper(
    "arxiv", "Horizontal Gene Transfer Hotspots in Soil Streptomyces Genomes",
    "We map where horizontally acquired genes cluster in the chromosomes of soil bacteria.",
    ("Genomes were assembled from isolates collected at the Rothamsted Broadbalk wheat "
     "experiment plots.",
     "Integrative conjugative elements were flagged with a custom hidden Markov profile."),
    age_days=20, arxiv="2611.05678", categories=("q-bio.GN",), doi="10.1101/2026.11.01.123456",
    answers={
        "body": "rothamsted broadbalk wheat isolates conjugative elements",
        "clue": "which study assembled isolates from the broadbalk wheat experiment plots and "
                "flagged integrative conjugative elements?",
        "tot": "a preprint on where borrowed genes pile up in the chromosomes of some earth "
               "microbes, I believe from an old farm trial",
    })
A6 = FakePaper(
    "arxiv", "Greedy Heuristics for Graph Coloring under Memory Limits",
    "We compare a greedy graph coloring heuristic benchmark under tight memory budgets.",
    ("Benchmarks came from the DIMACS challenge instances run on a single laptop.",),
    age_days=100, arxiv="2608.06789", categories=("cs.AI",),
    answers={"body": "graph coloring heuristic benchmark memory",
             "clue": "unused", "tot": "unused"})
A7 = FakePaper(
    "arxiv", "Property Tax Salience and Municipal Bond Yields",
    "We estimate how visible property taxes affect borrowing costs of cities.",
    ("Identification relies on the 2019 reassessment notices mailed in Cook County.",
     "Bond spreads were taken from the Municipal Securities Rulemaking Board trade feed."),
    age_days=200, arxiv="2605.07890", categories=("econ.GN",),
    doi="10.1016/j.jpubeco.2026.105000",
    answers={
        "body": "reassessment notices cook county bond spreads",
        "clue": "which paper used reassessment notices mailed in cook county and trade feed "
                "bond spreads?",
        "tot": "an economics paper showing that when homeowners notice their house levies, "
               "towns end up paying more to borrow",
    })
G = FakePaper(
    "arxiv", "A Study of Methods", "We review methods.", ("Methods were reviewed.",),
    age_days=5, arxiv="2611.09999", categories=("cs.CL",))
E1 = FakePaper(
    "europepmc", "Heat Waves and Emergency Admissions for Kidney Injury in Older Adults",
    "We link daily temperatures to hospital admissions for acute kidney injury among adults "
    "over 65.",
    ("Admissions were drawn from the Lombardy regional discharge registry.",
     "Exposure was defined with a distributed lag nonlinear model of maximum apparent "
     "temperature."),
    age_days=5, pmid="41000001", pmcid="12500001", doi="10.3389/fpubh.2026.1234567",
    answers={
        "body": "lombardy discharge registry apparent temperature lag",
        "clue": "which study used the lombardy regional discharge registry and a distributed "
                "lag of apparent temperature?",
        "tot": "I remember a study saying hot spells send more elderly people to hospital with "
               "failing organs that filter blood",
    })
E2 = FakePaper(
    "europepmc", "Rural Pharmacist-Led Hypertension Clinics: A Pragmatic Trial",
    "A pragmatic trial of blood pressure clinics run by pharmacists in rural areas.",
    ("Clinics operated in the Western Cape district of Overberg.",
     "Blood pressure was measured with validated oscillometric cuffs at each visit."),
    age_days=12, pmcid="12500002", idconv_pmid="41000002",
    answers={
        "body": "overberg district oscillometric cuffs",
        "clue": "which trial ran clinics in the overberg district measuring with validated "
                "oscillometric cuffs at each visit?",
        "tot": "some trial where chemists in the countryside looked after patients with high "
               "readings and it worked about as well as doctors",
    })
E3 = FakePaper(
    "europepmc", "Vitamin D Supplementation and Falls in Care Homes",
    "We test whether vitamin D prevents falls among care home residents.",
    ("Residents came from the Tayside care home network.",),
    age_days=45, pmid="40000003", pmcid="12400003",
    answers={"body": "tayside care home network residents", "clue": 400, "tot": "unused"})

CORPUS = [A1, A2, A3, A4, A5, A6, A7, G, E1, E2, E3]
KEPT = [A1, A3, A5, A7, E1, E2]
