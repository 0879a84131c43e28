"""Fetch the documentation folders the unseen question sets (tests/data/ask_unseen) are asked over.

Each folder is a few files of a Debian documentation package, fetched with `apt-get download`,
unpacked with `dpkg-deb -x` and checked against the SHA-256 each file had when its question set was
written (a newer package version may differ: the script says which files do, and the figures of
that set are then not comparable). The folders go to reports/unseen/<set>/, where the sets' `corpus`
("unseen/<set>") points `scripts/ask_dev.py`:

    .venv/bin/python scripts/unseen_corpora.py
    .venv/bin/python scripts/ask_dev.py tests/data/ask_unseen/nu7.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from qspace_frames.runtime.paths import reports_root  # noqa: E402

# set -> (package, version the set was written over, folder in the package, {file: sha256}), or a
# tuple of those for a set over several packages; a file the package holds gzipped
# ("debian-faq.en.txt.gz") is unpacked
SETS = {
    "nu4": (
        "developers-reference",
        "12.18",
        "usr/share/developers-reference/",
        {
            "best-pkging-practices.html": "69f66726db9bf21f896dd467fcfc97c56f735c775e87109963fb3fa0c21aad84",
            "beyond-pkging.html": "97412beb41b4298c01d9a15d66f0fd21224ca5092227c9f20f79ab55f6686699",
            "developer-duties.html": "034baef37e43cb5f75f8c0fa01af154acdd413155e58db7b670589ce19e0cb1b",
            "l10n.html": "9244e65b9db91ffdaaa3d43c22b8a610a92ff8ee68c7b0c31462768ba1b3edec",
            "new-maintainer.html": "228f2caaed6502e9304e8e488282d268545bf8a32db847ff84ae9500513dd66d",
            "pkgs.html": "0c7282c52c5b23875aa363b1fe6d9114277198c1f6110c12751c930c32998f2b",
            "resources.html": "51df7d6a4c39e360ce83bc710bcbcdebd0a193e14210a80f60863d80352bb845",
            "scope.html": "0f5209f7da4eefb122f1c52c66397eacf8b2cedbaea634589c8849bacc9d9dd4",
            "tools.html": "8ec19199949dc207bb05d203757e9f1a5860c6dbfef706b5f55a12843f948b69",
        },
    ),
    "nu5": (
        "debian-handbook",
        "11.20220922",
        "usr/share/doc/debian-handbook/html/en-US/",
        {
            "apt.html": "009abb91ab3829abfe5ce030745bb283cfa911b8c26b2379b5e2c2d480e31c8d",
            "network-services.html": "c617813e0c7e177af44dd4686ed495b4244a6402b98572d73db924b45130e197",
            "sect.apt-get.html": "4bd6f555bcd785c7c02cf1da2f200af21ad8f8b2f2ef136b70a5dd20d61aa3ce",
            "sect.common-procedures.html": "4d3f2f7cb7a01eec9a943ea1c25f8d7ce53541e720279eba6707d0e939592992",
            "sect.config-misc.html": "0bb2bf563826438db37d97d918ed2237de3a9c13562fc22abee1faf81c1d48dd",
            "sect.debian-internals.html": "6ca2f80cf0b9ff40d3c192c2c1f570b77895995a5455dd414cdc0acdb769391b",
            "sect.dist-upgrade.html": "92f1c48cb30d7df41176a16b7d01af8f82fb717056b6e2c4658ed3728696e93a",
            "sect.package-meta-information.html": "556a8a000fe695edb1607fd8750a49e6e224e1b653b6b2a592d9ba89424bee41",
            "sect.release-lifecycle.html": "6105693f4c714280af396d739c4fe38bd4cc7c320c676c7e33c558ca36f2a63f",
            "sect.supervision.html": "cddabd2a75b470617bb9c58c0445b9cbac9cbf8b6278339cb133f21f9d4b212c",
        },
    ),
    "nu6": (
        "debian-faq",
        "11.1",
        "usr/share/doc/debian/FAQ/",
        {
            "contributing.en.html": "e0f97e7053deb62ced14eca9b00bf5f9dd7d1c210ea658b66fdba8780e814254",
            "debian-faq.en.txt": "f687d96695d667f428edb40476d0b73efc611689e030d3a0828bb76f31dc81f6",
            "ftparchives.en.html": "a6b992af9d5ab6c4e5267af5f4b16ceb599f9d5ba23e1349d1493927c8fc965d",
            "pkg-basics.en.html": "736df96913d1270199a80a25cdf27c9bb1d340c4210f91e4204e32d40f75dd56",
            "pkgtools.en.html": "5d2f6d576621600d09591d88e96bdc6e994e47c32b1d1ac49154923a279ebe85",
            "support.en.html": "729fd5eb5b3f6d497a567ff13dfde83cc37fde795009159e8804eaa4faa2cb18",
            "uptodate.en.html": "939d5e69781cc2718aedb2ba0fb8662cb4d41db2845fafde833ace90f99aa1ef",
        },
    ),
    "nu7": (
        "maint-guide",
        "1.2.53",
        "usr/share/doc/maint-guide/html/",
        {
            "advanced.en.html": "b6f1e8303622b6718c130bb8a783a5baf3a8ee553e67a826df803368fbd3a3b0",
            "build.en.html": "74dd221e091a686d9efeb6ab9d0cec0c2026a16f277f0785c9d06119a12330a4",
            "checkit.en.html": "0deabc3b04536177f1b30e6f52cf0e750ef9347154e6e7ba97f9a8526100edda",
            "dother.en.html": "0806ab755749a0f03c34ecad017ebfb5d4e31c8a59d029de3ef9aad3ddf2161d",
            "dreq.en.html": "7bc48545be94806a8e615f9ff25b359cc21aebf4744e6d2ab5fa0082245680ee",
            "first.en.html": "40a3ec8f970237e02532c027761a2b6e2973a06a862716b015f512957f5bbd87",
            "modify.en.html": "0b2e4287cff4f333ae231c601772552cec464766534f891ef61908dd9662ebc0",
            "start.en.html": "eeaa4fd4e969e96361977b9ff3fdf8ce0052260618469e306076bd7e6e947135",
            "update.en.html": "1458457a45ced16df783adf2b77a03c163fa9d411f3828f281682ab2dd20b5bd",
            "upload.en.html": "333660ef07bce858d7f54a2f04e74069651059d395bf7c23ff1fa8c41e588625",
        },
    ),
    "nu8": (
        "debian-reference-en",
        "2.100",
        "usr/share/debian-reference/",
        {
            "ch03.en.html": "d51b80e2a3050a2d740ad1012631b7fa8035e5b87da7f1e22b4f76b0ff173951",
            "ch04.en.html": "fee37e8caeeb3df571d6a469d56c7d493ca1e63ebb014adc2506f01ded356c74",
            "ch05.en.html": "6a2ad647dc70330ee872256b21eb93870a838946a6c4867771c98a5d42646216",
            "ch06.en.html": "6523ca29b01d2af192b607672c5ee35112d3a50a5cd8dbc7ec01468e0f1cad84",
            "ch08.en.html": "c0ee6f9782d9e559d349a445341cb8a612a2e07f63e0987bf18c6748ef1cfe40",
        },
    ),
    "nu9": (
        "harden-doc",
        "3.19+nmu1",
        "usr/share/doc/harden-doc/html/en-US/",
        {
            "ch03s05.html": "1afe19028a89e9ac62f85752604851746e901694295c16ee5d782bea9378b075",
            "ch04s11.html": "7737c4f9855faf2f3c8ffbb1c6fa0f0ae9ba36cf5fb12c8d7b7397a769b8c246",
            "ch04s17.html": "89c5cfabe30948aafd7f4d1501753760b3af8be83f8695edb293886ee6257fb9",
            "ch10.html": "232d877fb2387599cd575572cfc653d4954cec30c1199ad2ba0156ceb50a645e",
            "ch12.html": "5b7f76480832d6f35cb5811a44795f3cf9121dfd6697a511c5b569bc04ce9fe2",
            "checklist.html": "e0c336e9e6f24424ff7ec693255013ed7b9fff387ed16b6b5bcb716da89d6290",
            "log-alerts.html": "c1866125b6e083d9c340ebc4f355bb36af890b2fea7ffc2b62550a6536db3a2d",
            "network-secure.html": "01e01bcfac2ca80dd254311268f0c042b9eadd7e87d0dce86f828a2c5b52761a",
            "sec-services.html": "cc85ce213910439bef24b15ea71b8ad66761e6d8ef5ebbd5b34494b27a1ffe78",
            "security-update.html": "b1e93d85a2327b11f394780f8fcf8556d7b0f785b74b2fd8f54cb08d82e3067d",
        },
    ),
    "nu10": (
        (
            "debian-kernel-handbook",
            "1.0.21",
            "usr/share/doc/debian-kernel-handbook/kernel-handbook.html/",
            {
                "ch-bugs.html": "56a130109dee2735edf70b460e616046df3dfeaaf2a786de2a4b06906065d407",
                "ch-common-tasks.html": "1d3a531cff7b8ae05808a585fc4606a06a594316b5a52e4891875b4ac6e32ba4",
                "ch-packaging.html": "6d802886b2f9fd5515681fe95d5d6e0e0a8eb3cdc8a71c1c04989ce2a199268b",
                "ch-update-hooks.html": "352db6aecfa9d1e07e20624c6f7ace56bdbef06f2f59987cefe3182b7364e39d",
                "ch-versions.html": "afd7cbfef1cc930ccfa85dc56efd20b14841e3ed69defda952aba3404250e673",
            },
        ),
        (
            "aptitude-doc-en",
            "0.8.13-5",
            "usr/share/doc/aptitude/html/en/",
            {
                "ch01s01s04.html": "cccca56323b1983d47e9af3615f2e7c34f29e7bef521b5cfb7b331aa1d07d6ea",
                "ch01s02.html": "a54e8c6bd4518fda9770dca52c9d8bc99b86cab4581296e08d09ca744672ade9",
                "ch02s04s01.html": "cf5bfab35c8588d78c6387cd40009b3629dd37703f72308ac89893e7b4877c35",
                "ch02s06.html": "b7a8b9a49b2a402ab296c81579f8b598a68da928cabbbf716b7628e634f24450",
                "pr01s04s03.html": "bc77ee824c92f135c9763dcfb7a91cfe55e709f3efd34a6ba2f3a0a6e0a21455",
            },
        ),
    ),
}


def sources(name: str) -> tuple[tuple, ...]:
    """The (package, version, folder, files) of each package the set is written over."""
    return SETS[name] if isinstance(SETS[name][0], tuple) else (SETS[name],)


def fetch(name: str, out: Path) -> list[str]:
    """The set's folder written to `out`; the names of the files whose bytes differ from the set's."""
    out.mkdir(parents=True, exist_ok=True)
    return [file for source in sources(name) for file in _fetch(name, source, out)]


def _fetch(name: str, source: tuple, out: Path) -> list[str]:
    """The files of one package of a set written to `out`; those whose bytes differ from the set's."""
    package, version, folder, files = source
    with tempfile.TemporaryDirectory() as tmp:
        for spec in (f"{package}={version}", package):  # the version written over, else the one offered
            if subprocess.run(["apt-get", "download", spec], cwd=tmp, capture_output=True).returncode == 0:
                break
        else:
            raise SystemExit(f"{name}: apt-get download {package} failed")
        deb = next(Path(tmp).glob("*.deb"))
        subprocess.run(["dpkg-deb", "-x", str(deb), str(Path(tmp) / "x")], check=True)
        differ = []
        for file, sha in sorted(files.items()):
            src = Path(tmp) / "x" / folder / file
            data = src.read_bytes() if src.is_file() else gzip.decompress((src.parent / (file + ".gz")).read_bytes())
            (out / file).write_bytes(data)
            if hashlib.sha256(data).hexdigest() != sha:
                differ.append(file)
    return differ


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="*", default=sorted(SETS), help="the sets to fetch (default: all)")
    args = ap.parse_args(argv)
    for name in args.sets:
        out = reports_root(ROOT) / "unseen" / name
        shutil.rmtree(out, ignore_errors=True)
        differ = fetch(name, out)
        n = sum(1 for _ in out.iterdir())
        print(f"{name}: {n} files in {out}" + (f"; differ from the set's: {', '.join(differ)}" if differ else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
