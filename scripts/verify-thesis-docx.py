#!/usr/bin/env python3
"""Checks a thesis .docx written by docio::thesis::write_thesis_docx.

Usage: scripts/verify-thesis-docx.py PAPER.docx

1. Opens it with python-docx and prints its paragraphs count, headings and each section's page
   number format; checks the TOC field and its cached entries are there.
2. When LibreOffice (soffice) is installed, converts it to PDF, reads the PDF with
   `pdftotext -layout` and checks the rendered pages show 目录, 第1章 and every chapter title,
   and no raw field code. Without soffice that part is skipped with a message.

Exits 0 when every check passes, 1 when one fails, 2 when it cannot run (no python-docx, no file).

A sample to check: THESIS_SAMPLE_OUT=/tmp/sample.docx cargo test -p docio thesis -- --ignored
python-docx in a throwaway venv: python3 -m venv /tmp/pdx && /tmp/pdx/bin/pip install python-docx
"""

import os
import shutil
import subprocess
import sys
import tempfile

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

failures = []


def check(ok, what):
    print(("  ok    " if ok else "  FAIL  ") + what)
    if not ok:
        failures.append(what)


def squeeze(text):
    """Text without whitespace: pdftotext spaces out CJK and justified lines unpredictably."""
    return "".join(text.split())


def inspect_docx(path):
    """Prints the structure and returns the chapter (Heading 1) titles."""
    try:
        import docx  # python-docx
    except ImportError:
        print("python-docx is not installed; e.g. python3 -m venv /tmp/pdx && "
              "/tmp/pdx/bin/pip install python-docx, then run with /tmp/pdx/bin/python")
        sys.exit(2)

    document = docx.Document(path)
    paragraphs = document.paragraphs
    print(f"{path}: {len(paragraphs)} paragraphs, {len(document.tables)} tables, "
          f"{len(document.sections)} sections")

    print("headings:")
    chapters = []
    for p in paragraphs:
        name = p.style.name if p.style is not None else ""
        if name.lower().startswith("heading") or name == "Unnumbered Heading":
            print(f"  [{name}] {p.text}")
            if name.lower() == "heading 1":
                chapters.append(p.text.strip())

    print("sections:")
    formats = []
    for i, section in enumerate(document.sections):
        number = section._sectPr.find(W + "pgNumType")
        fmt = number.get(W + "fmt") if number is not None else None
        start = number.get(W + "start") if number is not None else None
        formats.append((fmt, start))
        # Read the link first: reading a first section's missing header makes python-docx add one.
        linked = section.header.is_linked_to_previous
        header = "" if linked else " / ".join(p.text for p in section.header.paragraphs if p.text)
        print(f"  {i + 1}: page numbers {fmt or '-'} from {start or '-'}; "
              f"header {'(none/inherited)' if linked else repr(header)}")

    print("checks (python-docx):")
    check(len(document.sections) == 3, "three sections: cover, front matter, body")
    if len(formats) == 3:
        check(formats[1] == ("upperRoman", "1"), "front matter numbered I, II, … from I")
        check(formats[2] == ("decimal", "1"), "body numbered 1, 2, … from 1")
    check(len(chapters) > 0, "at least one chapter (Heading 1)")

    body = document.element.body
    instructions = " ".join(t.text or "" for t in body.iter(W + "instrText"))
    check('TOC \\o "1-3"' in instructions, "a TOC field")
    toc = [p.text for p in paragraphs
           if p.style is not None and p.style.name.lower().startswith("toc ")]
    check(any(squeeze(t).startswith("第1章") for t in toc),
          "the TOC's cached result lists 第1章")
    for title in chapters:
        check(any(squeeze(title) in squeeze(t) for t in toc), f"the TOC lists {title}")
    check(any(squeeze(t).startswith("参考文献") for t in toc), "the TOC lists 参考文献")
    return chapters


def inspect_pdf(path, chapters):
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        print("soffice not found: skipping the LibreOffice rendering checks")
        return
    if shutil.which("pdftotext") is None:
        print("pdftotext not found: skipping the LibreOffice rendering checks")
        return
    with tempfile.TemporaryDirectory() as out:
        # A private profile, so a running LibreOffice or a locked profile does not interfere.
        profile = "file://" + os.path.join(out, "profile")
        run = subprocess.run(
            [soffice, f"-env:UserInstallation={profile}", "--headless",
             "--convert-to", "pdf", "--outdir", out, path],
            capture_output=True, text=True, timeout=180)
        pdf = os.path.join(out, os.path.splitext(os.path.basename(path))[0] + ".pdf")
        print("checks (LibreOffice PDF):")
        check(run.returncode == 0 and os.path.exists(pdf),
              f"soffice converts it to PDF ({run.stderr.strip()[:200]})")
        if not os.path.exists(pdf):
            return
        text = subprocess.run(["pdftotext", "-layout", pdf, "-"], capture_output=True,
                              text=True, timeout=60).stdout
        pages = text.split("\f")
        print(f"  {len(pages)} pages rendered")
        flat = squeeze(text)
        check("目" in text and "录" in text, "目录 appears")
        check("第1章" in flat, "第1章 appears")
        for title in chapters:
            check(squeeze(title) in flat, f"chapter title {title} appears")
        check("TOC\\o" not in flat and "PAGEREF" not in flat, "no raw field code")
        # The contents page lists the chapter and, later, the chapter itself: 第1章 twice.
        check(flat.count("第1章") >= 2, "第1章 in the contents and as the chapter heading")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    path = sys.argv[1]
    if not os.path.isfile(path):
        print(f"no such file: {path}")
        sys.exit(2)
    chapters = inspect_docx(path)
    inspect_pdf(path, chapters)
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


if __name__ == "__main__":
    main()
