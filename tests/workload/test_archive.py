"""The trace archive: lookup order, the catalogue, downloads (no network: file:// URLs and a
replaced opener) and the ``hdeeprm-traces`` command."""

from __future__ import annotations

import gzip
import hashlib
import os
import urllib.error
from pathlib import Path

import pytest
from click.testing import CliRunner

from hdeeprm.cli.traces import main
from hdeeprm.workload import archive

SWF = b"; a tiny log\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 1 1 -1 -1 -1\n"


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache and no $HDEEPRM_TRACES."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(archive.TRACES_ENV, raising=False)
    return tmp_path


def served(folder: Path, name: str, data: bytes, gz: bool = True) -> Path:
    """A file standing for the server's copy."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def entry(monkeypatch: pytest.MonkeyPatch, name: str, url: str, file: bytes, text: bytes):
    """Catalogue ``name`` with the checksums of ``file`` (archive bytes) and ``text``."""
    info = archive.TraceInfo(
        name,
        url,
        hashlib.sha256(file).hexdigest(),
        hashlib.sha256(text).hexdigest(),
        1,
        1,
        "test log",
    )
    monkeypatch.setitem(archive.CATALOGUE, name, info)
    return info


def test_catalogue_is_complete() -> None:
    for info in archive.CATALOGUE.values():
        assert info.name.endswith(".swf.gz")
        assert info.url.startswith("https://")
        assert len(info.sha256) == len(info.content_sha256) == 64
        assert info.jobs > 0 and info.processors > 0 and info.description


def test_cache_dir_default_and_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert archive.cache_dir() == tmp_path / ".cache" / "hdeeprm" / "traces"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert archive.cache_dir() == tmp_path / "x" / "hdeeprm" / "traces"


def test_lookup_order_and_separator(homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = homes / "a", homes / "b"
    for folder in (first, second, archive.cache_dir()):
        folder.mkdir(parents=True)
    monkeypatch.setenv(archive.TRACES_ENV, os.pathsep.join([str(first), "", str(second)]))
    assert archive.search_folders() == [first, second, archive.cache_dir()]
    (archive.cache_dir() / "t.swf").write_text("cache")
    assert archive.find_trace("t.swf") == archive.cache_dir() / "t.swf"
    (second / "t.swf").write_text("second")
    assert archive.find_trace("t.swf") == second / "t.swf"
    (first / "t.swf").write_text("first")
    assert archive.trace_path("t.swf") == first / "t.swf"


def test_relative_folder_is_made_absolute(homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(homes)
    monkeypatch.setenv(archive.TRACES_ENV, "rel")
    assert archive.env_folders() == [homes / "rel"]


def test_missing_trace_message(homes: Path) -> None:
    with pytest.raises(archive.TraceNotFound) as caught:
        archive.trace_path("KTH-SP2-1996-2.1-cln.swf.gz")
    message = caught.value.message
    assert "KTH-SP2-1996-2.1-cln.swf.gz not found" in message
    assert "hdeeprm-traces fetch KTH-SP2-1996-2.1-cln.swf.gz" in message
    assert str(archive.cache_dir()) in message and archive.TRACES_ENV in message
    other = archive.missing_message("mine.swf")
    assert "not in the catalogue" in other and "fetch" not in other


def test_fetch_file_url(homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = served(homes / "server", "log.swf.gz", SWF)
    entry(monkeypatch, "log.swf.gz", source.as_uri(), source.read_bytes(), SWF)
    installed = archive.fetch_trace("log.swf.gz")
    assert installed == archive.cache_dir() / "log.swf.gz"
    assert installed.read_bytes() == source.read_bytes()
    assert archive.find_trace("log.swf.gz") == installed
    assert sorted(p.name for p in archive.cache_dir().iterdir()) == ["log.swf.gz"]


def test_recompressed_copy_is_accepted(homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same text, other gzip bytes (a server that re-compressed the log)."""
    source = served(homes / "server", "log.swf.gz", SWF)
    pinned = gzip.compress(SWF, compresslevel=1, mtime=12345)
    assert pinned != source.read_bytes()
    entry(monkeypatch, "log.swf.gz", source.as_uri(), pinned, SWF)
    assert gzip.decompress(archive.fetch_trace("log.swf.gz").read_bytes()) == SWF


def test_plain_source_is_gzipped(homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = served(homes / "server", "log.swf", SWF, gz=False)
    info = entry(monkeypatch, "log.swf.gz", source.as_uri(), b"other bytes", SWF)
    assert not info.gzipped_source
    first = archive.fetch_trace("log.swf.gz").read_bytes()
    assert gzip.decompress(first) == SWF
    again = archive.fetch_trace("log.swf.gz", homes / "again").read_bytes()
    assert again == first  # deterministic compression


def test_checksum_mismatch_kept_aside(homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = served(homes / "server", "log.swf.gz", SWF + b"2 1 0 5 1\n")
    entry(monkeypatch, "log.swf.gz", source.as_uri(), b"pinned", SWF)
    with pytest.raises(archive.ChecksumMismatch) as caught:
        archive.fetch_trace("log.swf.gz")
    kept = archive.cache_dir() / "log.swf.gz.mismatch"
    assert caught.value.kept == kept and kept.read_bytes() == source.read_bytes()
    assert archive.find_trace("log.swf.gz") is None
    assert "--accept-checksum" in str(caught.value) and str(kept) in str(caught.value)
    assert not (archive.cache_dir() / "log.swf.gz.part").exists()
    installed = archive.fetch_trace("log.swf.gz", accept_checksum=True)
    assert installed.read_bytes() == source.read_bytes()


def test_no_network(homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry(monkeypatch, "log.swf.gz", "https://example.invalid/log.swf.gz", b"x", SWF)

    def offline(url: str, timeout: float):
        raise urllib.error.URLError("Name or service not known")

    with pytest.raises(archive.FetchError, match="cannot download log.swf.gz .*no network"):
        archive.fetch_trace("log.swf.gz", opener=offline)
    assert list(archive.cache_dir().iterdir()) == []
    monkeypatch.setattr(archive.urllib.request, "urlopen", offline)
    result = CliRunner().invoke(main, ["fetch", "log.swf.gz"])
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Name or service not known" in errors[0]


def test_unknown_name(homes: Path) -> None:
    with pytest.raises(archive.InputError, match="unknown trace 'nope'.*LCG.swf.gz"):
        archive.fetch_trace("nope")
    result = CliRunner().invoke(main, ["fetch", "nope"])
    assert result.exit_code == 2 and "unknown trace" in result.output


def test_cli_list_path_fetch(homes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    listing = runner.invoke(main, ["list"])
    assert listing.exit_code == 0
    assert all(name in listing.output for name in archive.CATALOGUE)
    assert "missing" in listing.output
    missing = runner.invoke(main, ["path", "LCG.swf.gz"])
    assert missing.exit_code == 1 and "hdeeprm-traces fetch LCG.swf.gz" in missing.output
    source = served(homes / "server", "log.swf.gz", SWF)
    entry(monkeypatch, "log.swf.gz", source.as_uri(), source.read_bytes(), SWF)
    fetched = runner.invoke(main, ["fetch", "log.swf.gz"])
    assert fetched.exit_code == 0, fetched.output
    path = runner.invoke(main, ["path", "log.swf.gz"])
    assert path.output.strip() == str(archive.cache_dir() / "log.swf.gz")
    again = runner.invoke(main, ["fetch", "log.swf.gz"])
    assert "already at" in again.output
    assert runner.invoke(main, ["fetch"]).exit_code == 2
