"""Files from the Hugging Face hub: the published query stream and filtered artifact (a
dataset), and BERT's WordPiece vocabulary (a model repo).

``huggingface_hub`` downloads once and serves its local cache afterwards, offline included.
``NEEDLE_HF_BASE_URL`` points it at a mirror (or a test server). The cache is the hub's own
(``HF_HUB_CACHE``, else ``HF_HOME``/hub, else its default), read when a file is requested.
When a file can be neither downloaded nor found in the cache, the error says which file and
how to provide it locally. The hub is probed first: when its host refuses or does not resolve,
only the cache is asked, so offline costs a second, not the hub client's ~25 s of retries.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from needle_lib.benches.agentic_rare.extra import require
from needle_lib.net.reach import host_of, unreachable
from needle_lib.tomlconf import ConfigError

HUB_ENV = "NEEDLE_HF_BASE_URL"
DEFAULT_DATASET = "keenable-ai/keenbench-results"
STREAM_FILE = "agentic/queries.parquet"
ARTIFACT_FILE = "agentic/rare_entity.parquet"
VOCAB_REPO = "bert-base-uncased"
VOCAB_FILE = "vocab.txt"


def hub_file(
    repo_id: str,
    filename: str,
    *,
    repo_type: str | None,
    instead: str,
    env: Mapping[str, str] | None = None,
) -> Path:
    """The local path of ``filename`` in ``repo_id`` (downloaded on first use).

    ``instead`` names the option that supplies the file locally, for the error message.
    """
    hub = require("huggingface_hub")
    env = os.environ if env is None else env
    endpoint = env.get(HUB_ENV, "").strip() or None
    cache_dir: Path | None = None
    if env.get("HF_HUB_CACHE"):
        cache_dir = Path(env["HF_HUB_CACHE"])
    elif env.get("HF_HOME"):
        cache_dir = Path(env["HF_HOME"]) / "hub"
    url = endpoint or hub.constants.ENDPOINT
    offline = unreachable(url)
    try:
        path = hub.hf_hub_download(repo_id, filename, repo_type=repo_type, endpoint=endpoint,
                                   cache_dir=cache_dir, local_files_only=offline is not None)
    except Exception as exc:  # huggingface_hub raises many kinds; all mean "no file here"
        kind = f"{repo_type} " if repo_type else ""
        why = (f"cannot reach {host_of(url)} ({offline}); set {HUB_ENV} to a mirror, "
               if offline else
               f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}; connect once to "
               f"cache it, ")
        raise ConfigError(
            f"cannot get {filename} from the Hugging Face {kind}repo {repo_id} and it is not "
            f"in the local cache ({why}or pass {instead})"
        ) from None
    return Path(path)
