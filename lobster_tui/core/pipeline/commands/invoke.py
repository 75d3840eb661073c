"""``openclaw.invoke`` / ``clawd.invoke``: call an OpenClaw gateway tool over HTTP (spec §5.16).

Also home of the small HTTP client the LLM commands share (:func:`post_json`): one POST, no retries
(R-SAFE-4), abortable through the run's :class:`CancelSignal`, URLs resolved the way the
reference's WHATWG ``URL`` does where that decides *which host* receives a bearer token.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any

from ...errors import LobsterRuntimeError
from ...jsvalues import UNDEFINED, dumps_compact, js_string, js_truthy, loads
from ...records import record
from ..base import CommandContext, CommandResult, CommandSpec

if TYPE_CHECKING:
    from ...cancel import CancelSignal

ERROR_EXCERPT_CHARS = 400
"""How much of a non-2xx response body an error message quotes (spec §10.2)."""

_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):(.*)", re.DOTALL)
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
_FORBIDDEN_HOST_CHARS = frozenset(" \t\n\r#%/:<>?@[\\]^|\x00")
_POLL_SECONDS = 0.02


class InvalidUrlError(LobsterRuntimeError):
    """A URL the WHATWG parser rejects; the reference reports these as ``Invalid URL``."""

    def __init__(self) -> None:
        super().__init__("Invalid URL")


class TransportError(LobsterRuntimeError):
    """The request never produced an HTTP response (connection refused, reset, bad scheme...)."""


@record(frozen=True)
class HttpUrl:
    """An absolute URL split the way ``new URL()`` would serialise it.

    ``hostname`` is canonical (lower case, IPv4 shorthand expanded, IPv6 bracketed and compressed),
    so the credential-locality test looks at the host the request will actually reach.
    """

    scheme: str
    hostname: str
    port: int | None
    path: str
    userinfo: str

    @property
    def is_http(self) -> bool:
        return self.scheme in ("http", "https")

    @property
    def href(self) -> str:
        if not self.hostname and self.scheme not in _DEFAULT_PORTS:
            return f"{self.scheme}:{self.path}"
        auth = f"{self.userinfo}@" if self.userinfo else ""
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.scheme}://{auth}{self.hostname}{port}{self.path}"


def parse_url(text: str, *, absolute_path: str | None = None) -> HttpUrl:
    """``new URL(absolute_path, text)`` (or ``new URL(text)``); raises :class:`InvalidUrlError`.

    With ``absolute_path`` the base's own path, query and fragment are replaced, which is why
    ``--url http://host/base`` posts to ``http://host/tools/invoke`` (S-29).
    """
    match = _SCHEME.fullmatch(text.strip())
    if match is None:
        raise InvalidUrlError()
    scheme, rest = match.group(1).lower(), match.group(2)
    if scheme not in _DEFAULT_PORTS:
        # Non-http(s) schemes only need to be recognisable; callers reject them by scheme.
        # An opaque base ("localhost:8080" parses as scheme "localhost") cannot anchor a path.
        if absolute_path is not None and not rest.startswith("//"):
            raise InvalidUrlError()
        return HttpUrl(scheme=scheme, hostname="", port=None, path=absolute_path or rest, userinfo="")
    rest = rest.lstrip("/\\")
    end = len(rest)
    for stop in "/\\?#":
        index = rest.find(stop)
        if index != -1:
            end = min(end, index)
    authority, remainder = rest[:end], rest[end:]
    userinfo, _, hostport = authority.rpartition("@")
    host_text, port = _split_port(hostport, scheme)
    hostname = _canonical_host(host_text)
    if absolute_path is not None:
        path = absolute_path
    else:
        path = remainder.split("#", 1)[0].replace("\\", "/")
        if not path.startswith("/"):
            path = "/" + path
    return HttpUrl(scheme=scheme, hostname=hostname, port=port, path=path, userinfo=userinfo)


def _split_port(hostport: str, scheme: str) -> tuple[str, int | None]:
    if hostport.startswith("["):
        close = hostport.find("]")
        if close == -1:
            raise InvalidUrlError()
        host, tail = hostport[: close + 1], hostport[close + 1 :]
        if tail and not tail.startswith(":"):
            raise InvalidUrlError()
        port_text = tail[1:]
    else:
        host, _, port_text = hostport.partition(":")
    if not port_text:
        return host, None
    if not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535:
        raise InvalidUrlError()
    port = int(port_text)
    return host, None if port == _DEFAULT_PORTS[scheme] else port


def _canonical_host(text: str) -> str:
    from urllib.parse import unquote

    if text.startswith("["):
        import ipaddress

        try:
            return f"[{ipaddress.IPv6Address(text[1:-1]).compressed}]"
        except ValueError:
            raise InvalidUrlError() from None
    host = unquote(text)
    if not host or any(char in _FORBIDDEN_HOST_CHARS for char in host):
        raise InvalidUrlError()
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise InvalidUrlError() from None
    host = host.lower()
    ipv4 = _parse_ipv4(host)
    return ipv4 if ipv4 is not None else host


def _parse_ipv4(host: str) -> str | None:
    """WHATWG IPv4 parsing: ``127.1`` and ``0x7f.0.0.1`` are 127.0.0.1; None for domain names."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if _ipv4_number(parts[-1]) is None and not (parts[-1].isascii() and parts[-1].isdigit()):
        return None
    numbers = [_ipv4_number(part) for part in parts]
    if len(parts) > 4 or any(number is None for number in numbers):
        raise InvalidUrlError()
    values = [number for number in numbers if number is not None]
    if any(value > 255 for value in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        raise InvalidUrlError()
    address = values[-1]
    for index, value in enumerate(values[:-1]):
        address += value * 256 ** (3 - index)
    return ".".join(str((address >> shift) & 255) for shift in (24, 16, 8, 0))


def _ipv4_number(part: str) -> int | None:
    if not part or not part.isascii():
        return None
    base = 10
    digits = part
    if part[:2].lower() == "0x":
        base, digits = 16, part[2:]
    elif len(part) > 1 and part.startswith("0"):
        base, digits = 8, part[1:]
    if digits == "":
        return 0
    try:
        return int(digits, base) if digits.isalnum() else None
    except ValueError:
        return None


@record(frozen=True)
class HttpResponse:
    """Status line and body text of a completed request (any status)."""

    status: int
    reason: str
    text: str

    @property
    def ok(self) -> bool:
        return 200 <= self.status <= 299


def post_json(url: HttpUrl, body: str, *, token: str, signal: CancelSignal) -> HttpResponse:
    """POST ``body`` (JSON text) once; an abort stops waiting and shuts the socket down.

    The request runs in a worker thread so the caller can give up the moment the run is
    cancelled, whatever phase (DNS, connect, read) the request is in. ``token`` adds an
    ``authorization: Bearer`` header when non-empty.
    """
    signal.raise_if_aborted()
    if not url.is_http:
        raise TransportError(f"fetch failed: unsupported scheme {url.scheme}:")
    if url.userinfo:
        raise TransportError(f"Request cannot be constructed from a URL that includes credentials: {url.href}")
    tracker = _SocketTracker()
    outcome: list[HttpResponse | BaseException] = []
    finished = threading.Event()

    def work() -> None:
        try:
            outcome.append(_send(url, body, token, tracker))
        except BaseException as error:  # handed to the waiting thread, which re-raises
            outcome.append(error)
        finally:
            finished.set()

    threading.Thread(target=work, name="lobster-http", daemon=True).start()
    while not finished.wait(_POLL_SECONDS):
        if signal.aborted:
            tracker.abort()
            signal.raise_if_aborted()
    signal.raise_if_aborted()
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


class _SocketTracker:
    """Remembers the sockets a request opened so an abort can shut them down from outside."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[Any] = []
        self._aborted = False

    def register(self, sock: Any) -> None:
        with self._lock:
            if not self._aborted:
                self._sockets.append(sock)
                return
        _shutdown(sock)
        raise OSError("request aborted")

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shutdown(sock)

    def connection_factory(self, connection_class: Any) -> Any:
        """Wrap an ``http.client`` connection class so every socket it connects is registered."""

        def make(host: str, **kwargs: Any) -> Any:
            connection = connection_class(host, **kwargs)
            connect = connection.connect

            def tracked_connect() -> None:
                connect()
                self.register(connection.sock)

            connection.connect = tracked_connect
            return connection

        return make


def _shutdown(sock: Any) -> None:
    import socket

    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _send(url: HttpUrl, body: str, token: str, tracker: _SocketTracker) -> HttpResponse:
    import http.client
    import urllib.error
    import urllib.request

    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url.href, data=body.encode("utf-8"), headers=headers, method="POST")
    opener = _build_opener(tracker)
    try:
        try:
            with opener.open(request) as response:
                return HttpResponse(response.status, response.reason or "", _decode(response.read()))
        except urllib.error.HTTPError as error:
            # A non-2xx status is still an answer; its body is read like any other.
            with error:
                return HttpResponse(error.code, str(error.reason or ""), _decode(error.read()))
    except urllib.error.URLError as error:
        raise TransportError(f"fetch failed: {error.reason}") from None
    except (http.client.HTTPException, OSError, ValueError) as error:
        raise TransportError(f"fetch failed: {str(error) or type(error).__name__}") from None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _build_opener(tracker: _SocketTracker) -> Any:
    """An opener with no proxies (fetch ignores ``http_proxy``) and tracked sockets."""
    import http.client
    import urllib.request
    from urllib.parse import urlsplit

    class TrackedHTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            return self.do_open(tracker.connection_factory(http.client.HTTPConnection), req)

    class TrackedHTTPSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: Any) -> Any:
            import ssl

            factory = tracker.connection_factory(http.client.HTTPSConnection)
            return self.do_open(factory, req, context=ssl.create_default_context())

    class SameOriginAuthRedirectHandler(urllib.request.HTTPRedirectHandler):
        # Like fetch, never forward the bearer token to another origin on a redirect.
        def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
            new = super().redirect_request(req, fp, code, msg, headers, newurl)
            if new is not None:
                old, target = urlsplit(req.full_url), urlsplit(new.full_url)
                if (old.scheme, old.hostname, old.port) != (target.scheme, target.hostname, target.port):
                    new.remove_header("Authorization")
            return new

    return urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        TrackedHTTPHandler(),
        TrackedHTTPSHandler(),
        SameOriginAuthRedirectHandler(),
    )


# -- the command ---------------------------------------------------------------------------------

_ARGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "description": "OpenClaw control URL (or OPENCLAW_URL / CLAWD_URL)"},
        "token": {"type": "string", "description": "Bearer token (or OPENCLAW_TOKEN / CLAWD_TOKEN)"},
        "tool": {"type": "string", "description": "Tool name (e.g. message, cron, github, etc.)"},
        "action": {"type": "string", "description": "Tool action"},
        "args-json": {"type": "string", "description": "JSON string of tool args"},
        "sessionKey": {"type": "string", "description": "Optional session key attribution"},
        "session-key": {"type": "string", "description": "Alias for sessionKey"},
        "dryRun": {"type": "boolean", "description": "Dry run"},
        "dry-run": {"type": "boolean", "description": "Alias for dryRun"},
        "each": {"type": "boolean", "description": "Map each pipeline item into tool args"},
        "itemKey": {"type": "string", "description": "Key to set from the pipeline item (default: item)"},
        "item-key": {"type": "string", "description": "Alias for itemKey"},
        "_": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["tool", "action"],
}


def _help(name: str) -> str:
    return (
        f"{name} — call a local OpenClaw tool endpoint\n\n"
        "Usage:\n"
        f"  {name} --tool message --action send --args-json "
        "'{\"provider\":\"telegram\",\"to\":\"...\",\"message\":\"...\"}'\n"
        f"  {name} --tool message --action send --args-json '{{...}}' --dry-run\n"
        f"  ... | {name} --tool message --action send --each --item-key message --args-json "
        "'{\"provider\":\"telegram\",\"to\":\"...\"}'\n\n"
        "Config:\n"
        "  - Uses OPENCLAW_URL env var by default (or pass --url).\n"
        "  - Backward compatible: CLAWD_URL is also supported.\n"
        "  - Optional Bearer token via OPENCLAW_TOKEN env var (or pass --token).\n"
        "  - Backward compatible: CLAWD_TOKEN is also supported.\n"
        "  - Optional attribution via --session-key <sessionKey>.\n\n"
        "Notes:\n"
        "  - This is a thin transport bridge. Lobster should not own OAuth/secrets.\n"
    )


def first_present(*values: Any) -> Any:
    """JavaScript ``a ?? b ?? c``: the first value that is neither null nor undefined."""
    for value in values:
        if value is not None and value is not UNDEFINED:
            return value
    return UNDEFINED


def _make_invoke(name: str) -> CommandSpec:
    def run(items: list[Any], args: dict[str, Any], ctx: CommandContext) -> CommandResult:
        env = ctx.env
        url_text = js_string(first_present(args.get("url"), env.get("OPENCLAW_URL"), env.get("CLAWD_URL"), "")).strip()
        if not url_text:
            raise LobsterRuntimeError(f"{name} requires --url or OPENCLAW_URL")
        tool, action = args.get("tool"), args.get("action")
        if not js_truthy(tool) or not js_truthy(action):
            raise LobsterRuntimeError(f"{name} requires --tool and --action")
        # A bare --token still counts as explicit (its value is "true"): only ambient tokens
        # are subject to the locality rule.
        explicit_token = args.get("token") is not None
        token_source = args["token"] if explicit_token else first_present(env.get("OPENCLAW_TOKEN"), env.get("CLAWD_TOKEN"), "")
        token = js_string(token_source).strip()
        tool_args: Any = {}
        if js_truthy(args.get("args-json")):
            try:
                tool_args = loads(js_string(args["args-json"]))
            except ValueError:
                raise LobsterRuntimeError(f"{name} --args-json must be valid JSON") from None
        each = js_truthy(args.get("each"))
        if each and not isinstance(tool_args, dict):
            raise LobsterRuntimeError(f"{name} --each requires --args-json to be an object")
        endpoint = parse_url(url_text, absolute_path="/tools/invoke")
        if not endpoint.is_http:
            raise LobsterRuntimeError(f"{name} requires an http(s) --url")
        if token and not explicit_token and endpoint.hostname not in _LOCAL_HOSTS:
            raise LobsterRuntimeError(
                f"{name} refuses to send OPENCLAW_TOKEN/CLAWD_TOKEN to non-local --url; "
                "pass --token explicitly for remote endpoints"
            )
        session_key = first_present(args.get("sessionKey"), args.get("session-key"))
        dry_run = first_present(args.get("dryRun"), args.get("dry-run"))
        item_key = js_string(first_present(args.get("itemKey"), args.get("item-key"), "item"))

        def invoke_once(call_args: Any) -> list[Any]:
            body: dict[str, Any] = {"tool": js_string(tool), "action": js_string(action), "args": call_args}
            if js_truthy(session_key):
                body["sessionKey"] = js_string(session_key)
            if dry_run is not UNDEFINED:
                body["dryRun"] = js_truthy(dry_run)
            response = post_json(endpoint, dumps_compact(body), token=token, signal=ctx.signal)
            if not response.ok:
                raise LobsterRuntimeError(f"{name} failed ({response.status}): {response.text[:ERROR_EXCERPT_CHARS]}")
            try:
                parsed = loads(response.text) if response.text else None
            except ValueError:
                raise LobsterRuntimeError(f"{name} expected JSON response") from None
            if isinstance(parsed, dict) and "ok" in parsed:
                if parsed["ok"] is not True:
                    error = parsed.get("error")
                    message = first_present(error.get("message") if isinstance(error, dict) else None, "Unknown error")
                    raise LobsterRuntimeError(f"{name} tool error: {js_string(message)}")
                result = parsed.get("result")
                return result if isinstance(result, list) else [result]
            return parsed if isinstance(parsed, list) else [parsed]

        if not each:
            return CommandResult(output=invoke_once(tool_args))
        output: list[Any] = []
        for item in items:
            # One call per item, in order; a failure stops the rest (earlier calls happened).
            output.extend(invoke_once({**tool_args, item_key: item}))
        return CommandResult(output=output)

    return CommandSpec(
        name=name,
        run=run,
        description="Call a local OpenClaw tool endpoint",
        args_schema=_ARGS_SCHEMA,
        side_effects=["calls_clawd_tool"],
        help_text=_help(name),
    )


openclaw_invoke = _make_invoke("openclaw.invoke")
clawd_invoke = _make_invoke("clawd.invoke")

COMMANDS: list[CommandSpec] = [openclaw_invoke, clawd_invoke]
