"""Where the real workload traces are, and how to get them.

A trace is found by its archive file name (``UniLu-Gaia-2014-1.swf.gz``...): first in the
folders listed in ``$HDEEPRM_TRACES`` (separated by ``os.pathsep``, ``:`` on POSIX), then in
the per-user cache ``$XDG_CACHE_HOME/hdeeprm/traces`` (``~/.cache/hdeeprm/traces`` by default).
:func:`fetch_trace` downloads a catalogued trace into that cache and checks its SHA-256, so
that every user replays exactly the bytes the project's figures and digests were made with.

Two checksums are pinned per trace: the archive file's, and the uncompressed SWF text's. A
download whose file differs but whose text matches (a server that re-compressed the log) is
accepted; anything else is kept aside as ``NAME.mismatch`` and not installed, unless the
caller explicitly accepts it.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from hdeeprm.errors import HDeepRMError, InputError

#: Environment variable listing the folders searched before the cache.
TRACES_ENV = "HDEEPRM_TRACES"
#: Suffix of a download whose checksum did not match (kept for inspection, never used).
MISMATCH_SUFFIX = ".mismatch"
#: Suffix of a download in progress (removed when it fails).
PART_SUFFIX = ".part"
#: Seconds without an answer before a download gives up.
TIMEOUT = 60.0

_PWA = "https://www.cs.huji.ac.il/labs/parallel/workload"
# Commit-pinned so that the bytes behind the address cannot change.
_RLSCHEDULER = "https://raw.githubusercontent.com/DIR-LAB/deep-batch-scheduler/{commit}/data/{name}"


@dataclass(frozen=True)
class TraceInfo:
    """One known trace: where it comes from and what it must hash to.

    Attributes:
        name: archive file name, the key every lookup uses.
        url: public address it is downloaded from.
        sha256: SHA-256 of the archive file (gzip) the project's digests are pinned on.
        content_sha256: SHA-256 of the uncompressed SWF text.
        jobs: job lines in the log.
        processors: processors of the machine, as the log's header states.
        description: one line on what the log is.
        note: what a user should know before fetching it (versions, renames...).
    """

    name: str
    url: str
    sha256: str
    content_sha256: str
    jobs: int
    processors: int
    description: str
    note: str = ""

    @property
    def gzipped_source(self) -> bool:
        """Whether the address serves gzip (else plain SWF, compressed on arrival)."""
        return self.url.endswith(".gz")


CATALOGUE: dict[str, TraceInfo] = {
    info.name: info
    for info in (
        TraceInfo(
            "UniLu-Gaia-2014-1.swf.gz",
            f"{_PWA}/l_unilu_gaia/UniLu-Gaia-2014-1.swf.gz",
            "b4a8034dcd769175493b18cfa2ad398003eb44b7777231b5a237fd1c79436d0b",
            "232a1c177fd412a6ac1e4d2884904eb988b4d32804b36fdcd31d9ddfdd466db2",
            51_899,
            2_004,
            "University of Luxembourg Gaia cluster, May-Aug 2014",
            "version 1 of the log (the archive also serves the re-converted version 2, "
            "51,987 jobs); the pinned copy has no header comments, so an archive copy "
            "that carries them fails the check",
        ),
        TraceInfo(
            "KTH-SP2-1996-2.1-cln.swf.gz",
            f"{_PWA}/l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz",
            "656ec116fcc0479acb883d5b80b492cb7a332a6f985f9e38c6acf6c521b905fa",
            "fba36494c4e4257f72182e8b629ebb0bcb054b3b82851ef957445bd627adcc87",
            28_476,
            100,
            "KTH IBM SP2, 1996-1997, cleaned",
        ),
        TraceInfo(
            "NASA-iPSC-1993-3.1-cln.swf.gz",
            f"{_PWA}/l_nasa_ipsc/NASA-iPSC-1993-3.1-cln.swf.gz",
            "5589ae9b2fb78e3bf92de097497cf33a91607de1ad54563e43533f7827597f29",
            "9d997a2c20a7f7b0b6d81638d756ce8b2c524c4f2e9ec78da36001743ca33d76",
            18_239,
            128,
            "NASA Ames iPSC/860, 1993, cleaned",
        ),
        TraceInfo(
            "LANL-CM5-1994-4.1-cln.swf.gz",
            f"{_PWA}/l_lanl_cm5/LANL-CM5-1994-4.1-cln.swf.gz",
            "71ff3dfa301b3ee1bd30ebc63c5363b5e8ec488e75f1f9398aa46d485ef23c3c",
            "4766a62dabcc7403ec0a55534aff297203e692ddbf6637bd40100a3800f6354a",
            122_060,
            1_024,
            "LANL Thinking Machines CM-5, 1994-1996, cleaned",
        ),
        TraceInfo(
            "RICC-2010-2.swf.gz",
            f"{_PWA}/l_ricc/RICC-2010-2.swf.gz",
            "38b7c5c9843d9a9f3d61a2d8b927f6d39b68b368fb713886b5f2ce3499f2ec82",
            "986a2a12df85adc3c2a2eb80a31b4ff9a056b92637526ee53fb70637b1bf0518",
            447_794,
            8_192,
            "RIKEN RICC massively parallel cluster, 2010 (45 MB uncompressed)",
        ),
        TraceInfo(
            "LCG.swf.gz",
            f"{_PWA}/l_lcg/LCG-2005-1.swf.gz",
            "cda5d512febf84a3e07b3ad7b9481f8a0ba0f4c6e10f5d639aae73d2587448d9",
            "f8e60cbd08ca990bdd39effc3b3787d7e60539419e2345661c0d5c3b4fa60f4e",
            188_041,
            24_515,
            "LHC Computing Grid, 2005: every job uses 1 processor",
            "the archive names the file LCG-2005-1.swf.gz; it is installed as LCG.swf.gz",
        ),
        TraceInfo(
            "lublin_256.swf.gz",
            _RLSCHEDULER.format(
                commit="c649e852ab3cabbc5ac8e4f46b81b1dd66625831", name="lublin_256.swf"
            ),
            "2e0f44091547eafcadb005487fa06cae7f4a0e332e22e50741e833c25f10b007",
            "a394ab3d81179ebcf645a1cbd593a60b6dff7f11a510e1e6285c45f43310c962",
            10_000,
            256,
            "synthetic, Lublin-Feitelson model (RLScheduler's data set)",
            "served uncompressed by RLScheduler's repository: gzipped on arrival, so only "
            "the SWF text's checksum can match",
        ),
        TraceInfo(
            "lublin-aaroh.swf.gz",
            _RLSCHEDULER.format(
                commit="4bc321a1b1bd72b778b49c62f270e8996db1233f", name="lublin-aaroh.swf"
            ),
            "9434c02d170fd707621e61754688d605c52fc37f4ea5d6855f15bc5f9a56fd8a",
            "f575561c991fc4da6b212b0d76115eb38fd0d83cb6437803f6298470f684479c",
            10_000,
            256,
            "synthetic, Lublin-Feitelson model (RLScheduler's data set)",
            "served uncompressed by RLScheduler's repository: gzipped on arrival, so only "
            "the SWF text's checksum can match",
        ),
    )
}


class TraceNotFound(InputError):
    """A trace is in none of the searched folders."""


class FetchError(HDeepRMError):
    """A download failed (no network, server error, file cannot be written)."""


class ChecksumMismatch(FetchError):
    """A download does not hash to the pinned value; it was kept aside, not installed."""

    def __init__(self, message: str, kept: Path) -> None:
        super().__init__(message)
        self.kept = kept


# --- lookup -------------------------------------------------------------------------------
def cache_dir() -> Path:
    """The per-user trace cache: ``$XDG_CACHE_HOME/hdeeprm/traces``, else under ``~/.cache``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hdeeprm" / "traces"


def env_folders() -> list[Path]:
    """The folders of ``$HDEEPRM_TRACES``, in order, made absolute (empty entries skipped)."""
    value = os.environ.get(TRACES_ENV, "")
    return [Path(part).expanduser().absolute() for part in value.split(os.pathsep) if part]


def search_folders() -> list[Path]:
    """Every folder searched, in the order searched: ``$HDEEPRM_TRACES``'s, then the cache."""
    return [*env_folders(), cache_dir()]


def find_trace(name: str, folders: Iterable[Path] | None = None) -> Path | None:
    """The first ``folder / name`` that is a file, or ``None``.

    Args:
        name: archive file name (any name: catalogued or a user's own log).
        folders: where to look; :func:`search_folders` when ``None``.
    """
    for folder in search_folders() if folders is None else folders:
        path = Path(folder) / name
        if path.is_file():
            return path
    return None


def missing_message(name: str, folders: Sequence[Path] | None = None) -> str:
    """Why ``name`` is not found, and the command that gets it."""
    searched = search_folders() if folders is None else list(folders)
    where = ", ".join(str(f) for f in searched)
    if name in CATALOGUE:
        fix = f"run `hdeeprm-traces fetch {name}`, or set {TRACES_ENV} to a folder holding it"
    else:
        fix = f"set {TRACES_ENV} to a folder holding it (it is not in the catalogue)"
    return f"trace {name} not found (searched: {where}): {fix}"


def trace_path(name: str, folders: Sequence[Path] | None = None) -> Path:
    """The path of trace ``name``; :class:`TraceNotFound` saying how to get it when absent."""
    path = find_trace(name, folders)
    if path is None:
        raise TraceNotFound(missing_message(name, folders))
    return path


# --- checksums ----------------------------------------------------------------------------
def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def content_sha256(path: Path) -> str | None:
    """SHA-256 of a gzip file's uncompressed bytes, or ``None`` when it is not valid gzip."""
    digest = hashlib.sha256()
    try:
        with gzip.open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except (OSError, EOFError, zlib.error):
        return None
    return digest.hexdigest()


def verify(info: TraceInfo, path: Path) -> bool:
    """Whether ``path`` holds the catalogued trace: same file, or same text re-compressed."""
    if file_sha256(path) == info.sha256:
        return True
    return content_sha256(path) == info.content_sha256


# --- download -----------------------------------------------------------------------------
#: Opens a URL for reading (``urllib.request.urlopen``); tests replace it.
Opener = Callable[..., IO[bytes]]


def catalogued(name: str) -> TraceInfo:
    """The catalogue entry of ``name``; :class:`InputError` listing the known names."""
    try:
        return CATALOGUE[name]
    except KeyError:
        known = ", ".join(CATALOGUE)
        raise InputError(f"unknown trace {name!r}; known traces: {known}") from None


def fetch_trace(
    name: str,
    dest: Path | None = None,
    *,
    accept_checksum: bool = False,
    opener: Opener | None = None,
    timeout: float = TIMEOUT,
) -> Path:
    """Download trace ``name`` into ``dest`` (the cache by default) and check its SHA-256.

    The file is written to ``NAME.part`` and moved into place only once checked, so an
    interrupted or wrong download never shows up as the trace.

    Args:
        name: catalogued archive file name.
        dest: folder to install into; :func:`cache_dir` when ``None``.
        accept_checksum: install a file whose checksum does not match (at the user's risk:
            results made with it may differ from the documented ones).
        opener: replaces ``urllib.request.urlopen`` (tests).
        timeout: seconds without an answer before giving up.

    Returns:
        The installed file.

    Raises:
        InputError: ``name`` is not catalogued.
        FetchError: the download failed (message names the URL and the reason).
        ChecksumMismatch: the file does not match; it is kept as ``NAME.mismatch``.
    """
    info = catalogued(name)
    folder = cache_dir() if dest is None else Path(dest)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"cannot create {folder}: {exc.strerror or exc}") from None
    final = folder / name
    part = folder / (name + PART_SUFFIX)
    open_url = urllib.request.urlopen if opener is None else opener
    try:
        with open_url(info.url, timeout=timeout) as response, open(part, "wb") as raw:
            if info.gzipped_source:
                shutil.copyfileobj(response, raw, 1 << 20)
            else:
                # mtime=0 and no file name: the same text always gives the same bytes.
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
                    shutil.copyfileobj(response, packed, 1 << 20)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        part.unlink(missing_ok=True)
        reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
        raise FetchError(
            f"cannot download {name} from {info.url}: {reason} (no network? copy the file "
            f"into a folder listed in {TRACES_ENV} instead)"
        ) from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    if not verify(info, part):
        if accept_checksum:
            os.replace(part, final)
            return final
        kept = folder / (name + MISMATCH_SUFFIX)
        os.replace(part, kept)
        raise ChecksumMismatch(
            f"{name} from {info.url} does not match the pinned SHA-256 {info.sha256} "
            f"(got {file_sha256(kept)}); kept aside as {kept}, not installed. The server may "
            "serve another version of the log; to use it anyway (results may differ from the "
            f"documented ones) run `hdeeprm-traces fetch --accept-checksum {name}`",
            kept,
        )
    os.replace(part, final)
    return final
