"""The one exception base of kube-rehash, and the exit code each failure maps to.

Every layer raises subclasses of `RehashError`, so the CLI can turn any failure into the contract's exit
code and a one-line message without catching anything broader. One exception is not a failure of any stage
but the absence of a server to fail against: `NoContact`, which carries the `RehashError` that says why.
"""

from __future__ import annotations

import re

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PENDING = 3
EXIT_UNREACHABLE = 4

# Longest excerpt of a response body kept in an error message; bodies may echo request content.
MAX_BODY_EXCERPT = 200


class RehashError(Exception):
    """Base of every error kube-rehash raises on purpose."""

    exit_code = EXIT_FAILED


class ConfigError(RehashError):
    """Bad configuration file, flag, environment variable or kubeconfig (exit 2)."""

    exit_code = EXIT_USAGE


class CredentialsError(ConfigError):
    """No usable credentials could be resolved from kubeconfig or in-cluster service account (exit 2)."""


class UnreachableError(RehashError):
    """The API server cannot be reached or TLS verification failed (exit 4 before any work is done)."""

    exit_code = EXIT_UNREACHABLE


class NoContact(BaseException):
    """The command's first request found no API server, or one that rejects the credentials: nothing was done
    and nothing more can be (exit 4, `cause` says why).

    The client raises it instead of `cause` (an `UnreachableError` or `Unauthorized`) until a request has
    been answered with the credentials accepted, so a command spends no request proving contact before its
    work: its first request is the proof. It derives from BaseException on purpose. Once the server has
    answered, a failed request is that scope's or that workload's failure, reported while the pass carries
    on, and every stage catches `RehashError` for that; before, there is nothing to carry on with, so this
    unwinds the whole command, as an interrupt does, to the CLI, which says `cause` and exits with its
    code."""

    def __init__(self, cause: RehashError) -> None:
        super().__init__(str(cause))
        self.cause = cause


class ApiError(RehashError):
    """A Kubernetes API error response, carrying its Status (code, reason, message).

    `message` is the server's Status message, already truncated; it never contains a request body.
    """

    unanswered_before = False
    """An earlier attempt of this request may have been served though its answer never came (a connection
    lost after it was sent, or a 5xx): for a write, this answer may be about what that attempt did."""

    def __init__(self, code: int, reason: str, message: str, *, method: str = "", path: str = "") -> None:
        self.code = code
        self.reason = reason
        self.message = message[:MAX_BODY_EXCERPT]
        self.method = method
        self.path = path
        where = f"{method} {path}: " if method else ""
        super().__init__(f"{where}{code} {reason}: {self.message}")


class Unauthorized(ApiError):
    """401: the credentials were rejected (exit 4 when it happens before any work)."""

    exit_code = EXIT_UNREACHABLE


class Forbidden(ApiError):
    """403: RBAC denies the request. Never retried: in a CronJob it is a configuration bug to report."""


class NotFound(ApiError):
    """404: the object, or the resource type itself, does not exist."""


class Conflict(ApiError):
    """409: a resourceVersion precondition failed or the object already exists."""


class Gone(ApiError):
    """410: a list `continue` token expired."""


class Invalid(ApiError):
    """422: the server rejected the request content (also a failed JSON-patch `test`)."""


class AdmissionDenied(ApiError):
    """An admission controller refused the request (a ValidatingAdmissionPolicy, an admission webhook).

    Not an `Invalid`, although a policy without a `reason` answers 422 Invalid like a failed JSON-patch
    `test`: the request was sound and re-reading the object cannot change the policy's verdict, so it is
    neither retried nor taken for a lost race (re-read and re-decide). Its message is the policy's.
    """


# kube-apiserver's wording of an admission denial (k8s.io/apiserver admission/plugin/policy/validating and
# admission/plugin/webhook/errors): "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: ...",
# "admission webhook \"w\" denied the request: ...". A failed JSON-patch `test` says "the server rejected
# our request due to an error in our request".
_ADMISSION_DENIAL = re.compile(
    r"ValidatingAdmissionPolicy '[^']*' with binding '[^']*' denied request|"
    r'admission webhook "[^"]*" denied the request'
)


class TooManyRequests(ApiError):
    """429: throttled; retried after Retry-After within the deadline."""


class ServerError(ApiError):
    """5xx: retried with backoff within the deadline."""


_BY_CODE: dict[int, type[ApiError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    422: Invalid,
    429: TooManyRequests,
}


def api_error_for(code: int, reason: str, message: str, *, method: str = "", path: str = "") -> ApiError:
    """Build the typed ApiError subclass that matches an HTTP status code."""
    if code in (400, 422) and _ADMISSION_DENIAL.search(message):
        return AdmissionDenied(code, reason, message, method=method, path=path)
    cls = _BY_CODE.get(code) or (ServerError if code >= 500 else ApiError)
    return cls(code, reason, message, method=method, path=path)


class PassCut(RehashError):
    """A request the pass may no longer start: its time budget is spent, or it was asked to stop.

    Never a failure of the workload concerned: what was not reached is reported `deferred`."""

    stops_pass = False
    """True when the pass was asked to stop (SIGTERM), not merely out of time."""


class BudgetExhausted(PassCut):
    """The pass's time budget (`timeout`) leaves no room for another request of this kind."""


class Stopped(PassCut):
    """The pass was asked to stop (SIGTERM): in-flight requests finish, no new one starts."""

    stops_pass = True


class ListOverCap(RehashError):
    """A list started without knowing its collection's size showed more objects than the read strategy
    allows it (`policy.reads.cluster_list_cap`): not a failure, the reader goes on by other requests."""
