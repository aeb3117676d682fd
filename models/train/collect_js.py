#!/usr/bin/env python3
"""Stage 0 (runs on the workstation, not the GPU machine): collect TypeScript/JavaScript
source from an `npm install`ed node_modules folder into one compressed JSONL file.

Keeps permissively licensed packages only, drops minified/generated/bundled files,
deduplicates by content hash.  Output records: {pkg, version, license, path, sha256, text}.

    python3 models/train/collect_js.py --node-modules /tmp/jsdata/node_modules \
        --out .traindata/js.jsonl.xz
"""
import argparse
import hashlib
import json
import lzma
import os
import re
import sys

PERMISSIVE = re.compile(r"^(MIT|ISC|Apache-2\.0|BSD-2-Clause|BSD-3-Clause|0BSD|Unlicense|CC0-1\.0|BlueOak-1\.0\.0|Python-2\.0)$")
EXTS = (".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs", ".jsx")
BAD_PARTS = ("/dist/", "/umd/", "/bundles/", "/min/", "/build/", "/browser/", "/esm5/", "/vendor/",
             "/test/", "/tests/", "/__tests__/", "/fixtures/", "/locale/", "/locales/")


def licence_of(pj):
    lic = pj.get("license")
    if isinstance(lic, dict):
        lic = lic.get("type")
    if not lic and isinstance(pj.get("licenses"), list) and pj["licenses"]:
        lic = pj["licenses"][0].get("type")
    return (lic or "").strip("() ")


def permissive(lic):
    parts = re.split(r"\s+OR\s+|\s+AND\s+", lic)
    return bool(lic) and all(PERMISSIVE.match(p.strip("() ")) for p in parts)


def good_text(text):
    if "\x00" in text or len(text) < 200 or len(text) > 400_000:
        return False
    lines = text.split("\n")
    if max(len(l) for l in lines) > 400:
        return False
    if len(text) / max(1, len(lines)) > 90:
        return False
    head = text[:500]
    if "auto-generated" in head.lower() or "do not edit" in head.lower() or "sourceMappingURL" in text[-300:] and len(lines) < 5:
        return False
    return True


def find_packages(nm):
    for entry in sorted(os.listdir(nm)):
        p = os.path.join(nm, entry)
        if entry.startswith("."):
            continue
        if entry.startswith("@"):
            for sub in sorted(os.listdir(p)):
                yield os.path.join(p, sub)
        else:
            yield p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--node-modules", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-mb-per-pkg", type=float, default=12.0)
    ap.add_argument("--max-dts-share", type=float, default=0.5, help="cap .d.ts bytes to this share of a package")
    args = ap.parse_args()
    seen = set()
    n_files = 0
    n_bytes = 0
    pkgs = []
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with lzma.open(args.out, "wt", encoding="utf-8", preset=6) as out:
        for pdir in find_packages(args.node_modules):
            pjp = os.path.join(pdir, "package.json")
            if not os.path.isfile(pjp):
                continue
            try:
                pj = json.load(open(pjp, encoding="utf-8"))
            except Exception:
                continue
            name, ver, lic = pj.get("name", os.path.basename(pdir)), pj.get("version", "?"), licence_of(pj)
            if not permissive(lic):
                print(f"skip {name}: licence {lic!r}", file=sys.stderr)
                continue
            files = []
            for root, dirs, fnames in os.walk(pdir):
                dirs[:] = sorted(d for d in dirs if d != "node_modules")
                for f in sorted(fnames):
                    if f.endswith(EXTS) and ".min." not in f:
                        files.append(os.path.join(root, f))
            has_src = any("/src/" in f for f in files)
            budget = args.max_mb_per_pkg * 1e6
            dts_budget = budget * args.max_dts_share
            used = dts_used = 0
            pfiles = pbytes = 0
            for fp in files:
                rel = os.path.relpath(fp, pdir)
                relp = "/" + rel
                if any(b in relp for b in BAD_PARTS):
                    continue
                if has_src and "/src/" not in relp and not fp.endswith(".d.ts"):
                    continue  # prefer hand-written src over compiled output
                try:
                    text = open(fp, encoding="utf-8").read()
                except Exception:
                    continue
                if not good_text(text):
                    continue
                h = hashlib.sha256(text.encode()).hexdigest()
                if h in seen:
                    continue
                isdts = fp.endswith(".d.ts")
                if used + len(text) > budget or (isdts and dts_used + len(text) > dts_budget):
                    continue
                seen.add(h)
                used += len(text)
                dts_used += len(text) if isdts else 0
                out.write(json.dumps({"pkg": name, "version": ver, "license": lic, "path": rel,
                                      "sha256": h, "text": text}) + "\n")
                pfiles += 1
                pbytes += len(text)
            if pfiles:
                pkgs.append((name, ver, lic, pfiles, pbytes))
                n_files += pfiles
                n_bytes += pbytes
    for p in sorted(pkgs, key=lambda x: -x[4])[:40]:
        print("%-40s %-10s %-14s %6d files %8.2f MB" % (p[0], p[1], p[2], p[3], p[4] / 1e6))
    print(f"total: {len(pkgs)} packages, {n_files} files, {n_bytes / 1e6:.1f} MB -> {args.out} "
          f"({os.path.getsize(args.out) / 1e6:.1f} MB compressed)")


if __name__ == "__main__":
    main()
