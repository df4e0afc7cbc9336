"""LLM relevance judge: Needs Met (0–4) ratings of search results, cached on disk."""

from needle_lib.judge.cache import (
    DEFAULT_CACHE_PATH,
    CacheError,
    JudgeCache,
    JudgedPair,
    ProfiledQuery,
)
from needle_lib.judge.config import (
    DEFAULT_JUDGE_BASE_URL,
    DEFAULT_JUDGE_MODEL,
    judge_model_config,
)
from needle_lib.judge.judge import DEFAULT_CONCURRENCY, RelevanceJudge
from needle_lib.judge.parse import parse_verdict
from needle_lib.judge.profile import PROFILE_PROMPT_VERSION, QueryProfile, parse_profile
from needle_lib.judge.prompt import JUDGE_PROMPT_VERSION, build_messages, cut_evidence
from needle_lib.judge.verdict import GATES, LABELS, JudgeError, JudgeItem, Verdict

__all__ = [
    "DEFAULT_CACHE_PATH",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_JUDGE_BASE_URL",
    "DEFAULT_JUDGE_MODEL",
    "GATES",
    "JUDGE_PROMPT_VERSION",
    "LABELS",
    "PROFILE_PROMPT_VERSION",
    "CacheError",
    "JudgeCache",
    "JudgeError",
    "JudgeItem",
    "JudgedPair",
    "ProfiledQuery",
    "QueryProfile",
    "RelevanceJudge",
    "Verdict",
    "build_messages",
    "cut_evidence",
    "judge_model_config",
    "parse_profile",
    "parse_verdict",
]
