"""Turn a judge model's answer into a rating, tolerating the usual ways models wrap JSON.

Policy (documented because it decides scores):

* ``<think>``/``<thinking>`` blocks are dropped; the answer is the last JSON object in what
  remains that carries ``rating`` or ``label`` (code fences and surrounding prose are fine;
  the last object wins because models that think aloud put their final answer last).
* The rating is trusted when it is a whole number (``3``, ``3.0``, ``"3"``): the label is then
  corrected to match it. The rating is the number that is scored, and models drift on the
  wording of labels more often than on the digit they wrote.
* A rating that is missing, null or not a number (``"high"``) is derived from the label.
* A numeric rating off the 0–4 scale or not whole (``5``, ``2.5``) is a ``JudgeError``: the
  model misread the scale and guessing which end it meant would invent data.
* Nothing usable at all is a ``JudgeError`` — never a zero.
* Gates (see ``verdict.GATES``) are recorded as the judge wrote them, lowercased; a gate it
  left out is simply absent. They explain a rating; the rating alone is scored.
"""

from __future__ import annotations

import json
import re

from needle_lib.jsonio import JSON, JSONObject
from needle_lib.judge.verdict import GATES, LABELS, MAX_REPLY_CHARS, JudgeError, Verdict
from needle_lib.redact import redact, redact_then_cut

_THINK_BLOCK = re.compile(r"<(think|thinking)>.*?</\1>", re.S | re.I)
_UNCLOSED_THINK = re.compile(r"<(think|thinking)>", re.I)
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)")
_EXCERPT_CHARS = 200


def _label_key(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


#: Accepted spellings of each label (case, spaces and punctuation ignored) → rating.
_LABEL_RATINGS: dict[str, int] = {
    **{_label_key(label): rating for rating, label in LABELS.items()},
    "failstomeet": 0,
    "fails": 0,
    "slightlymeets": 1,
    "moderatelymeets": 2,
    "highlymeets": 3,
    "fullymeets": 4,
}


def excerpt(text: str) -> str:
    """A bounded one-line quote of a model answer, for error messages."""
    return redact_then_cut(text, _EXCERPT_CHARS)


def kept_reply(text: str, limit: int = MAX_REPLY_CHARS) -> str:
    """A judge reply as a verdict keeps it for audit: secrets masked, and when longer than
    ``limit`` its head and its tail (where the final JSON verdict sits) with a note of how
    much was left out between them."""
    text = redact(text)
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} [… {len(text) - 2 * half} characters left out …] {text[-half:]}"


def _json_objects(text: str) -> list[JSONObject]:
    """Every top-level JSON object embedded in ``text``, in order."""
    decoder = json.JSONDecoder()
    found: list[JSONObject] = []
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = decoder.raw_decode(text, pos)
        except RecursionError:  # ``{{{…`` thousands deep: nothing a judge meant to write
            raise JudgeError(f"answer nests JSON too deeply to read: {excerpt(text)}") from None
        except ValueError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        pos = text.find("{", end)
    return found


def _rating_from(value: JSON) -> int | None:
    """The rating if ``value`` is numeric, None if it is not a number at all."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        text = repr(value)
    elif isinstance(value, str):
        text = value.strip()
    else:
        return None
    if not _NUMBER.fullmatch(text):
        return None
    number = float(text)
    if not number.is_integer() or number not in LABELS:
        raise JudgeError(f"rating {value!r} is not on the 0-4 Needs Met scale")
    return int(number)


def _rating_of_label(value: JSON) -> int | None:
    return _LABEL_RATINGS.get(_label_key(value)) if isinstance(value, str) else None


def answer_objects(text: str) -> list[JSONObject]:
    """The JSON objects of a model answer once think blocks are dropped, in order."""
    answer = _THINK_BLOCK.sub("", text)
    if _UNCLOSED_THINK.search(answer):
        raise JudgeError(
            f"answer ends inside an unclosed think block (max_tokens too small?): "
            f"{excerpt(text)!r}"
        )
    return _json_objects(answer)


def _gates(obj: JSONObject) -> dict[str, str]:
    return {
        gate: str(obj[gate]).strip().lower()
        for gate in GATES
        if isinstance(obj.get(gate), str | int | float) and str(obj[gate]).strip()
    }


def parse_verdict(text: str) -> Verdict:
    """The verdict in a model answer; raises ``JudgeError`` if unusable."""
    candidates = [obj for obj in answer_objects(text) if "rating" in obj or "label" in obj]
    if not candidates:
        raise JudgeError(f"no JSON object with a rating in the answer: {excerpt(text)!r}")
    obj = candidates[-1]
    rating = _rating_from(obj.get("rating"))
    if rating is None:
        rating = _rating_of_label(obj.get("label"))
    if rating is None:
        raise JudgeError(
            f"neither rating {obj.get('rating')!r} nor label {obj.get('label')!r} is usable"
        )
    reasoning = obj.get("reasoning")
    return Verdict(
        rating=rating,
        label=LABELS[rating],
        reasoning=kept_reply(reasoning.strip()) if isinstance(reasoning, str) else "",
        gates=_gates(obj),
        reply=kept_reply(text),
    )
