#!/usr/bin/env python3
"""Reads a generated .pptx with python-pptx, a reader independent of the one that wrote it.

Prints JSON: the slide size, and for every slide its text frames and tables (position and size
in EMU, the text; a table's rows and columns) and its speaker notes. The tests compare the frames with where LibreOffice drew each word.

Usage: verify-deck.py DECK.pptx   (python-pptx: scripts/test.sh installs it in target/office-python)
Exits 0 when the deck opened, 2 when it cannot run (no python-pptx, no file).
"""
import json
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        from pptx import Presentation
    except ImportError:
        print("python-pptx is not installed: run scripts/test.sh (it installs target/office-python)",
              file=sys.stderr)
        return 2
    deck = Presentation(sys.argv[1])
    slides = []
    for slide in deck.slides:
        frames = []
        for shape in slide.shapes:
            if shape.has_text_frame and shape.text_frame.text.strip():
                frames.append({
                    "left": shape.left, "top": shape.top,
                    "width": shape.width, "height": shape.height,
                    "text": shape.text_frame.text,
                })
            elif getattr(shape, "has_table", False) and shape.has_table:
                # A table's words must lie inside the frame its measured rows add up to.
                cells = [cell.text for row in shape.table.rows for cell in row.cells]
                frames.append({
                    "left": shape.left, "top": shape.top,
                    "width": shape.width, "height": shape.height,
                    "text": "\n".join(cells), "table": [len(shape.table.rows), len(shape.table.columns)],
                })
        notes = slide.notes_slide.notes_text_frame.text if slide.has_notes_slide else ""
        connectors = sum(1 for s in slide.shapes if s.shape_type == 9 or s.element.tag.endswith("cxnSp"))
        pictures = sum(1 for s in slide.shapes if s.shape_type == 13)
        slides.append({"frames": frames, "notes": notes, "connectors": connectors,
                       "pictures": pictures})
    print(json.dumps({"width": deck.slide_width, "height": deck.slide_height, "slides": slides},
                     ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
