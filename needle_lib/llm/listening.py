"""Is anything listening at a model's local server? Asked once, before a run starts.

The commonest first-hour mistake is a run without ``--base-url`` while no server listens at
the default (LM Studio's ``http://localhost:1234``). Left to the preflight, every (corpus,
model) pair retried its connection and wrote an INVALID dump: tens of seconds and a dozen
files to say "nothing is running". A refused connection on this machine is unambiguous and
answers at once, so the run checks it up front and stops with one line naming the fix.
Only loopback hosts are probed: a remote host is left to the preflight (a DNS lookup or a
firewall's silence is not a refusal, and a check must not cost a hosted run a round trip).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from needle_lib.llm.config import DEFAULTS, ModelConfig

#: Seconds to wait for a loopback connection: a refusal is immediate, a listener accepts
#: at once; a longer wait means a busy server, which the preflight handles.
CONNECT_TIMEOUT_S = 2.0


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def refuses(base_url: str, timeout: float = CONNECT_TIMEOUT_S) -> bool:
    """Whether ``base_url`` is on this machine and its port refuses connections. Anything
    else (a listener, a remote host, a timeout) is False: not this check's to judge."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if not _loopback(host):
        return False
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return False  # a malformed port: the request path reports it
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


def not_listening(model: ModelConfig, flag_given: bool) -> str:
    """The one line for a model whose local server refuses connections."""
    url = model.base_url
    if flag_given:
        where = f"--base-url {url}"
    elif url == DEFAULTS["base_url"]:
        where = f"{url} (the default base URL: LM Studio's local server)"
    else:
        where = f"{url} (base_url of {model.source})"
    return (
        f"model {model.key}: nothing listens at {where}: connection refused. Start the "
        f"server, or point at it with --base-url URL (llama.cpp's llama-server: "
        f"http://localhost:8080, Ollama: http://localhost:11434, vLLM: http://localhost:8000)"
    )
