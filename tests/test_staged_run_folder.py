"""A new run's raw folder is made whole in the build's temp folder and renamed into place
(corpus/manifest.py ``put_folder``): what a reader, the next build and ``check`` rely on."""

import os
import stat

from helpers import EXAMPLES

from wikitrace.build import BuildOptions, build
from wikitrace.corpus.manifest import FileWriter


def _build(out):
    return build(BuildOptions(inputs=[EXAMPLES], out=out, quiet=True, offline=True))


def test_folder_appears_whole_with_published_modes(tmp_path):
    out = tmp_path / "corpus"
    _build(out)
    assert os.listdir(out / ".wikitrace" / "tmp") == []  # nothing staged is left behind
    folder = out / "raw" / "step-0000"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    names = sorted(os.listdir(folder))
    assert names and all(stat.S_IMODE((folder / n).stat().st_mode) == 0o444 for n in names)


def test_existing_folder_is_left_to_file_by_file_writes(tmp_path):
    root, tmp = tmp_path / "c", tmp_path / "t"
    (root / "raw" / "step-0001").mkdir(parents=True)
    tmp.mkdir()
    writer = FileWriter(str(root), str(tmp), "runs")
    assert writer.put_folder("raw/step-0001", [("raw/step-0001/a.md", b"x")]) is None
    assert os.listdir(root / "raw" / "step-0001") == [] and os.listdir(tmp) == []
    entries = writer.put_folder("raw/step-0002", [("raw/step-0002/a.md", b"hello\n")])
    assert (root / "raw" / "step-0002" / "a.md").read_bytes() == b"hello\n"
    assert entries["raw/step-0002/a.md"][1] == 6 and os.listdir(tmp) == []


def test_a_folder_left_half_made_by_a_killed_build_is_removed(tmp_path):
    out = tmp_path / "corpus"
    _build(out)
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*")
              if p.is_file() and ".wikitrace" not in p.parts}
    stage = out / ".wikitrace" / "tmp" / "runs-99999-3.d"
    stage.mkdir()
    (stage / "turns.md").write_text("half")
    os.chmod(stage / "turns.md", 0o444)
    _build(out)
    assert not stage.exists()
    after = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*")
             if p.is_file() and ".wikitrace" not in p.parts}
    assert after.keys() == before.keys()
