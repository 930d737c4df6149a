"""Write data/bfcl/slice.json: the BFCL v4 items lesson 12 scores, taken from the `bfcl-eval` wheel.

    pip download --no-deps bfcl-eval==2026.3.23 -d /tmp/bfcl
    python scripts/bfcl_slice.py /tmp/bfcl/bfcl_eval-2026.3.23-py3-none-any.whl

The items are copied as they are (question, function documentation, possible answers); only the
ids below are kept. Licence and provenance: data/bfcl/README.md.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

ITEMS = {
    "simple_python": [0, 4, 5, 6, 7, 10, 11, 17, 23, 25, 26, 27],
    "parallel": [1, 4, 14, 16, 19, 28, 33, 36],
    "irrelevance": [0, 5, 6, 8, 9, 12, 13, 15],
}
OUT = Path(__file__).resolve().parent.parent / "data" / "bfcl" / "slice.json"


def lines(wheel: zipfile.ZipFile, name: str) -> dict[str, dict]:
    """One BFCL data file (JSON lines), keyed by item id."""
    text = wheel.read(f"bfcl_eval/data/{name}").decode("utf-8")
    return {item["id"]: item for item in map(json.loads, text.splitlines()) if item}


def main(wheel_path: str) -> None:
    items = []
    with zipfile.ZipFile(wheel_path) as wheel:
        for category, numbers in ITEMS.items():
            questions = lines(wheel, f"BFCL_v4_{category}.json")
            answers = {}
            if category != "irrelevance":
                answers = lines(wheel, f"possible_answer/BFCL_v4_{category}.json")
            for number in numbers:
                item_id = f"{category}_{number}"
                item = questions[item_id]
                items.append(
                    {
                        "id": item_id,
                        "category": category.removesuffix("_python"),
                        "question": item["question"][0][0]["content"],
                        "functions": item["function"],
                        "ground_truth": answers.get(item_id, {}).get("ground_truth", []),
                    }
                )
    OUT.write_text(json.dumps(items, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(items)} items to {OUT.name}")


if __name__ == "__main__":
    main(sys.argv[1])
