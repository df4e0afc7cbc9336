"""LLM relevance judge: Needs Met (0–4) ratings of search results, cached on disk."""

from needle_lib.judge.cache import DEFAULT_CACHE_PATH, CacheError, JudgeCache, JudgedPair
from needle_lib.judge.config import (
    DEFAULT_JUDGE_BASE_URL,
    DEFAULT_JUDGE_MODEL,
    judge_model_config,
)
from needle_lib.judge.judge import DEFAULT_CONCURRENCY, RelevanceJudge
from needle_lib.judge.parse import parse_verdict
from needle_lib.judge.prompt import JUDGE_PROMPT_VERSION, build_messages
from needle_lib.judge.verdict import LABELS, JudgeError, JudgeItem, Verdict

__all__ = [
    "DEFAULT_CACHE_PATH",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_JUDGE_BASE_URL",
    "DEFAULT_JUDGE_MODEL",
    "JUDGE_PROMPT_VERSION",
    "LABELS",
    "CacheError",
    "JudgeCache",
    "JudgeError",
    "JudgeItem",
    "JudgedPair",
    "RelevanceJudge",
    "Verdict",
    "build_messages",
    "judge_model_config",
    "parse_verdict",
]
