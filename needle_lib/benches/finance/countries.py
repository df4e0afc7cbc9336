"""Every name of a country: a gold country named by any alias is accepted in any of its forms.

Gold may name a country by its short name ("United States"), its official name ("United
States of America"), a code ("USA", "NL") or an everyday alias ("Holland"), and Wikidata
adds aliases per row; a result may use any other of these. So each gold form is mapped to
its country, and every form of that country counts.

Sources: ISO 3166 through ``pycountry`` when installed (``uv sync --extra countries``):
short, official and common names and the codes of every country; without it, the table
below (the countries companies are most often headquartered in). The table also carries the
everyday aliases ISO does not list (Holland, Britain, UAE, …), so it is used in both cases.

ISO codes identify a gold country but are never searched for in text: two- and
three-letter codes are everyday words in capitals ("IN", "IT", "CAN", "AND").
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

#: alpha-2 → the country's usual English names and aliases (the first is its short name).
COUNTRY_NAMES: dict[str, tuple[str, ...]] = {
    "US": ("United States", "United States of America", "US", "USA", "U.S.", "U.S.A.",
           "America"),
    "GB": ("United Kingdom", "UK", "U.K.", "Great Britain", "Britain"),
    "AE": ("United Arab Emirates", "UAE", "U.A.E."),
    "CN": ("China", "PRC", "People's Republic of China"),
    "KR": ("South Korea", "Republic of Korea", "Korea"),
    "RU": ("Russia", "Russian Federation"),
    "DE": ("Germany", "Deutschland", "Federal Republic of Germany"),
    "NL": ("Netherlands", "Holland", "Nederland", "Kingdom of the Netherlands"),
    "CH": ("Switzerland", "Swiss Confederation"),
    "JP": ("Japan",),
    "FR": ("France", "French Republic"),
    "CA": ("Canada",),
    "IE": ("Ireland", "Republic of Ireland"),
    "IN": ("India", "Republic of India"),
    "TW": ("Taiwan",),
    "CZ": ("Czechia", "Czech Republic"),
    "VN": ("Vietnam", "Viet Nam"),
}


def _pycountry() -> ModuleType | None:
    try:
        return importlib.import_module("pycountry")
    except ImportError:
        return None


def _uninverted(name: str) -> str | None:
    """ISO's "Korea, Republic of" as people write it ("Republic of Korea"); other names with
    a comma ("Taiwan, Province of China") are not names anyone writes, so None."""
    if ", " not in name:
        return name
    head, _, tail = name.partition(", ")
    return f"{tail} {head}" if tail.endswith(" of") else None


@cache
def _index() -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """(alpha-2 → every text form, lower-cased name or code → alpha-2)."""
    forms: dict[str, list[str]] = {code: list(names) for code, names in COUNTRY_NAMES.items()}
    codes: dict[str, str] = {}
    iso = _pycountry()
    if iso is not None:
        for country in iso.countries:
            names = [str(name) for attr in ("common_name", "name", "official_name")
                     if (name := getattr(country, attr, None))]
            known = forms.setdefault(country.alpha_2, [])
            known.extend(n for n in map(_uninverted, names) if n and n not in known)
            codes[country.alpha_3.lower()] = country.alpha_2
            for name in names:
                codes[name.lower()] = country.alpha_2
    for code, names in forms.items():
        codes[code.lower()] = code
        for name in names:
            codes[name.lower()] = code
    return {code: tuple(names) for code, names in forms.items()}, codes


def country_forms(name: str) -> tuple[str, ...]:
    """Every form of the country ``name`` names (``name`` alone when it names none)."""
    forms, codes = _index()
    code = codes.get(name.strip().lower())
    return forms[code] if code else (name,)

