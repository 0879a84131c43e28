"""Discovery: what is walked, what is skipped, how the corpus is chosen."""

from __future__ import annotations

import os

import polars as pl

from qspace_frames.corpus.inventory import choose_corpus, discover
from qspace_frames.params import CorpusParams

P = CorpusParams()


def test_skips_project_and_hidden_folders_and_survives_symlink_loops(tmp_path):
    for d in [".git", "__pycache__", "node_modules", ".venv", "build", ".hidden", "docs/sub"]:
        (tmp_path / d).mkdir(parents=True)
        (tmp_path / d / "a.txt").write_text("text in " + d)
    (tmp_path / ".secret.txt").write_text("hidden file")
    (tmp_path / "name with space #1 ~é.md").write_text("# Title\n")
    os.symlink(tmp_path, tmp_path / "docs" / "loop")  # a folder link back to the root
    os.symlink(tmp_path / "self.txt", tmp_path / "self.txt")  # a file link to itself
    df = discover(tmp_path, P)
    assert df["path"].to_list() == ["docs/sub/a.txt", "name with space #1 ~é.md", "self.txt"]
    loop = df.filter(pl.col("path") == "self.txt").row(0, named=True)
    assert loop["sha256"] is None and loop["discover_error"].startswith("cannot read")
    assert df.filter(pl.col("path") != "self.txt")["doc_id"].str.starts_with("doc_").all()


def test_doc_id_is_content_addressed(tmp_path):
    (tmp_path / "a.txt").write_text("same bytes")
    (tmp_path / "b.txt").write_text("same bytes")
    (tmp_path / "c.txt").write_text("other bytes")
    ids = discover(tmp_path, P)["doc_id"].to_list()
    assert ids[0] == ids[1] != ids[2]


def test_choose_corpus_never_picks_the_project_itself(root):
    choice = choose_corpus(root, P)
    assert choice.corpus == root / "sample_corpus"
    assert [n for n, _ in choice.candidates] == ["sample_corpus"]  # not tests/, reports/, notebooks/ ...


def test_a_runs_first_line_counts_one_file_in_the_singular():
    from qspace_frames.corpus.inventory import changes_sentence

    one = changes_sentence({"files": 1, "added": 1, "changed": 0, "removed": 0, "unchanged": 0}, {"reused": 1, "computed": 0})
    assert one == "1 file: 1 added, 0 changed, 0 removed, 0 unchanged; 1 document read from its part, 0 read from their files"
    two = changes_sentence({"files": 2, "added": 0, "changed": 0, "removed": 0, "unchanged": 2})
    assert two.startswith("2 files: 0 added")
