"""The JSON Schemas the judges ask their replies to follow (``llm.structured``).

Each says in schema form what its prompt says in words, key for key and value for value, so
a server that constrains decoding to it yields a reply the prompt's parser reads as it
always did (the parsers stay the judges of what a reply means). Free-text fields carry a
``maxLength``: under a grammar a small model's reasoning otherwise runs on to ``max_tokens``
and the verdict is never reached.
"""

from __future__ import annotations

from needle_lib.judge.profile import ARCHETYPES, DOMAINS, MAX_MAIN_ASPECTS, QUERY_TYPES
from needle_lib.judge.verdict import LABELS
from needle_lib.llm.formats import JsonSchema

#: Characters of the verdict's reasoning (the prompt asks for one or two sentences).
MAX_REASONING_CHARS = 400
#: Characters of one aspect phrase of a query profile.
MAX_ASPECT_CHARS = 80
MAX_AUX_ASPECTS = 5

_GATE_VALUES = {
    "integrity": ["pass", "limit", "fail"],
    "freshness": ["pass", "fail", "n/a"],
    "staleness": ["pass", "fail", "n/a"],
    "domain": ["pass", "fail", "n/a"],
    "operators": ["pass", "fail", "n/a"],
}


def _object(properties: dict[str, object]) -> dict[str, object]:
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def _choice(values: list[str] | tuple[str, ...]) -> dict[str, object]:
    return {"type": "string", "enum": list(values)}


VERDICT_SCHEMA = JsonSchema("needs_met_verdict", _object({
    "reasoning": {"type": "string", "maxLength": MAX_REASONING_CHARS},
    **{gate: _choice(values) for gate, values in _GATE_VALUES.items()},
    "rating": {"type": "integer", "enum": sorted(LABELS)},
    "label": _choice([LABELS[rating] for rating in sorted(LABELS)]),
}))

_ASPECT = {"type": "string", "maxLength": MAX_ASPECT_CHARS}
PROFILE_SCHEMA = JsonSchema("query_profile", _object({
    "query_type": _choice(QUERY_TYPES),
    "query_domain": _choice(DOMAINS),
    "main_aspects": {"type": "array", "items": _ASPECT, "minItems": 1,
                     "maxItems": MAX_MAIN_ASPECTS},
    "aux_aspects": {"type": "array", "items": _ASPECT, "maxItems": MAX_AUX_ASPECTS},
    "content_archetype": _choice(ARCHETYPES),
}))

#: The answer judge's yes/no as an object (a bare string is not an object schema, which
#: some servers require at the top).
ANSWER_SCHEMA = JsonSchema("states_answer", _object({"answer": _choice(["yes", "no"])}))
