"""Where a Delta lake lives, and what delta-rs needs to reach it.

A location is a local folder (a path, or ``file:///path``) or ``s3://bucket/prefix`` on AWS S3 or any S3-compatible
store (MinIO, Ceph, R2, moto in the tests); each table is the folder ``<location>/<table>`` holding its ``_delta_log``.

For S3 the storage options come from the environment, the variables every AWS tool reads, so no credential is ever
written in a config, a command line or the lake:

- ``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY`` (required), ``AWS_SESSION_TOKEN`` (optional);
- ``AWS_REGION``, else ``AWS_DEFAULT_REGION`` (required on AWS; ``us-east-1`` when an endpoint is given, which most
  S3-compatible stores ignore);
- ``AWS_ENDPOINT_URL`` for a store other than AWS; an ``http://`` endpoint sets ``AWS_ALLOW_HTTP`` (object_store
  refuses plain HTTP otherwise), and ``AWS_ALLOW_HTTP=true`` may be set by hand too.

**Concurrent writers on S3.** A Delta commit is the creation of ``_delta_log/<version>.json``; two writers must never
both create the same version. delta-rs 1.x does that with a *conditional put* (``PUT`` with ``If-None-Match: *``,
object_store's ``PutMode::Create``): the loser gets 412 and retries at the next version after checking the winner's
commit for conflicts. AWS S3 has honoured conditional writes since August 2024, as do MinIO, R2 and Ceph; delta-rs
1.0 removed its DynamoDB locking provider (``AWS_S3_LOCKING_PROVIDER``) as no longer needed, and only
``AWS_S3_ALLOW_UNSAFE_RENAME=true`` (or a locking provider) switches back to its old rename-based backend, which is
unsafe with several writers. So this module sets ``AWS_CONDITIONAL_PUT=etag`` (object_store's default in the version
delta-rs 1.6 ships, set explicitly so an environment variable cannot turn it off) and
``AWS_S3_ALLOW_UNSAFE_RENAME=false``, and refuses an environment or override that asks for either unsafe mode. A
store that does not implement ``If-None-Match: *`` cannot host several writers; check yours with the race test
(``tests/lake/delta/test_concurrency.py``) before pointing writers at it.

Secrets never reach a message: ``StorageOptions``' repr masks them, errors name the variable that is missing, never a
value, and ``StorageOptions.scrub`` removes a secret from any text delta-rs returns before it is raised again."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Literal, Mapping
from urllib.parse import urlsplit

from dialogbench.lake.delta.errors import MissingSetting, RefusedSetting

ACCESS_KEY = "AWS_ACCESS_KEY_ID"
SECRET_KEY = "AWS_SECRET_ACCESS_KEY"
SESSION_TOKEN = "AWS_SESSION_TOKEN"
REGION = "AWS_REGION"
DEFAULT_REGION = "AWS_DEFAULT_REGION"
ENDPOINT = "AWS_ENDPOINT_URL"
ALLOW_HTTP = "AWS_ALLOW_HTTP"
CONDITIONAL_PUT = "AWS_CONDITIONAL_PUT"
UNSAFE_RENAME = "AWS_S3_ALLOW_UNSAFE_RENAME"
LOCKING_PROVIDER = "AWS_S3_LOCKING_PROVIDER"
SECRETS = frozenset({ACCESS_KEY, SECRET_KEY, SESSION_TOKEN})  # masked wherever options are shown
_TABLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_TRUE = {"1", "true", "yes", "on"}


class StorageOptions(Mapping[str, str]):
    """delta-rs ``storage_options``, read-only, whose repr masks every credential (``SECRETS``, and any key naming a
    secret, token, password or key id) so printing a store or its options shows which are set, never their values."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._values = {str(k): str(v) for k, v in (values or {}).items()}

    def __getitem__(self, key: str) -> str:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def as_dict(self) -> dict[str, str]:
        """A plain copy for delta-rs (which wants a dict)."""
        return dict(self._values)

    def secret_values(self) -> list[str]:
        return [v for k, v in self._values.items() if _is_secret(k) and v]

    def scrub(self, text: str) -> str:
        """``text`` with every secret value of these options replaced by ``***``: delta-rs and object_store do not
        quote credentials in their errors, but a message is only raised again through this."""
        for value in sorted(self.secret_values(), key=len, reverse=True):
            text = text.replace(value, "***")
        return text

    def __repr__(self) -> str:
        shown = {k: ("***" if _is_secret(k) else v) for k, v in self._values.items()}
        return f"StorageOptions({shown!r})"

    __str__ = __repr__


def _is_secret(key: str) -> bool:
    upper = key.upper()
    return upper in SECRETS or any(word in upper for word in ("SECRET", "TOKEN", "PASSWORD", "KEY_ID", "SAS_KEY"))


@dataclass(frozen=True)
class Location:
    """A parsed lake location: ``kind`` ``local`` (``root`` an absolute folder path) or ``s3`` (``root`` is
    ``s3://bucket/prefix``, no trailing slash). It holds no credential, so it prints and pickles safely."""

    kind: Literal["local", "s3"]
    root: str
    bucket: str | None = None
    prefix: str = ""

    @classmethod
    def parse(cls, spec: "str | os.PathLike[str] | Location") -> "Location":
        """A local path (relative ones made absolute now, so a later ``chdir`` changes nothing), ``file:///path``,
        or ``s3://bucket[/prefix]``. A URL holding a user, password, port-less credentials, a query or a fragment is
        refused without quoting it (those are where signed URLs and pasted keys hide)."""
        if isinstance(spec, Location):
            return spec
        text = os.fspath(spec)
        if not text:
            raise ValueError("lake location: empty")
        if "://" not in text:
            return cls("local", str(Path(text).absolute()))
        parts = urlsplit(text)
        scheme = parts.scheme.lower()
        if "@" in text or parts.query or parts.fragment:  # "@" anywhere: a secret may hold "/", ending the netloc
            raise RefusedSetting(f"lake location ({scheme}://…): a URL holding credentials, a query or a fragment is "
                                 f"refused; give credentials in {ACCESS_KEY} / {SECRET_KEY}")
        if scheme == "file":
            if parts.netloc not in ("", "localhost"):
                raise ValueError(f"lake location {text}: a file URL names a local path (file:///path)")
            return cls("local", str(Path(parts.path).absolute()))
        if scheme in ("s3", "s3a"):
            bucket = parts.netloc
            if not re.fullmatch(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", bucket):
                raise ValueError(f"lake location {scheme}://{bucket}/…: not a valid bucket name")
            prefix = parts.path.strip("/")
            return cls("s3", f"s3://{bucket}" + (f"/{prefix}" if prefix else ""), bucket, prefix)
        raise ValueError(f"lake location {scheme}://…: only a local folder or s3://bucket/prefix is supported")

    def table_uri(self, table: str) -> str:
        """The table's folder as delta-rs takes it: an absolute path, or ``s3://bucket/prefix/table``."""
        table = check_table_name(table)
        return str(Path(self.root) / table) if self.kind == "local" else f"{self.root}/{table}"

    def storage_options(self, *, overrides: Mapping[str, str] | None = None,
                        environ: Mapping[str, str] | None = None) -> StorageOptions:
        """What delta-rs needs here: for a folder, ``overrides`` only (usually nothing); for S3, ``s3_options``."""
        if self.kind == "local":
            return StorageOptions(overrides)
        return s3_options(location=self, overrides=overrides, environ=environ)

    def __str__(self) -> str:
        return self.root


def check_table_name(table: str) -> str:
    """``table`` when it is one plain folder name (letters, digits, ``_.-``, not starting with ``_`` or ``.``, which
    are the lake's own folders, at most 128 characters); ValueError naming it otherwise."""
    if not isinstance(table, str) or not _TABLE.fullmatch(table):
        raise ValueError(f"table name {table!r}: use letters, digits and _.- (not first), at most 128 characters")
    return table


def s3_options(*, location: Location | str, overrides: Mapping[str, str] | None = None,
               environ: Mapping[str, str] | None = None) -> StorageOptions:
    """The storage options for an S3 location, from ``overrides`` first, then ``environ`` (default ``os.environ``).
    MissingSetting names the variable a location lacks; RefusedSetting names the setting that would make concurrent
    writers unsafe. See the module's docstring for each variable and for why conditional put is forced on."""
    env = os.environ if environ is None else environ
    given = {k.upper(): str(v) for k, v in (overrides or {}).items()}

    def value(name: str) -> str | None:
        found = given.get(name, env.get(name))
        return found if found not in (None, "") else None

    def missing(names: str, why: str) -> MissingSetting:
        return MissingSetting(f"{location}: {names} is not set ({why}); set it in the environment")

    options: dict[str, str] = {}
    for name, why in ((ACCESS_KEY, "the S3 access key id"), (SECRET_KEY, "the S3 secret access key")):
        found = value(name)
        if found is None:
            raise missing(name, why)
        options[name] = found
    if (token := value(SESSION_TOKEN)) is not None:
        options[SESSION_TOKEN] = token
    endpoint = value(ENDPOINT)
    region = value(REGION) or value(DEFAULT_REGION)
    if region is None:
        if endpoint is None:
            raise missing(f"{REGION} (or {DEFAULT_REGION})", "the bucket's AWS region")
        region = "us-east-1"
    options[REGION] = region
    if endpoint is not None:
        if urlsplit(endpoint).scheme not in ("http", "https") or "@" in endpoint:
            raise RefusedSetting(f"{location}: {ENDPOINT} must be an http(s) URL with no credentials in it")
        options[ENDPOINT] = endpoint
        if endpoint.lower().startswith("http://"):
            options[ALLOW_HTTP] = "true"
    if (allow := value(ALLOW_HTTP)) is not None and allow.lower() in _TRUE:
        options[ALLOW_HTTP] = "true"
    if (rename := value(UNSAFE_RENAME)) is not None and rename.lower() in _TRUE:
        raise RefusedSetting(f"{location}: {UNSAFE_RENAME} is set: its rename-based commits let two concurrent "
                             f"writers overwrite each other's commit; unset it (conditional put is used instead)")
    if value(LOCKING_PROVIDER) is not None:
        raise RefusedSetting(f"{location}: {LOCKING_PROVIDER} is set: delta-rs 1.x commits with conditional puts and "
                             "has no locking provider; unset it")
    if (put := value(CONDITIONAL_PUT)) is not None and put.lower() != "etag":
        raise RefusedSetting(f"{location}: {CONDITIONAL_PUT} must be 'etag' (conditional put on); concurrent commits "
                             "are not safe otherwise")
    options[CONDITIONAL_PUT] = "etag"
    options[UNSAFE_RENAME] = "false"
    for key, found in given.items():  # anything else the caller passes (timeouts, …) goes through as given
        options.setdefault(key, found)
    return StorageOptions(options)
