"""Publishes a dataset with the official Python `weave` SDK for the TypeScript SDK to read (WeaveCrossSdkTest).

Writes the rows it published, as JSON with their keys in order, to the file EXPECTED, and prints one JSON line
"RESULT {...}" with the dataset's ref and digest.
"""

import json
import os

import weave

PROJECT = os.environ["PROJECT"]


def rows(n):
    # keys deliberately not in sorted order, at every depth; nested lists and objects, unicode, integers, floats, null
    return [
        {
            "zeta": i,
            "question": f'Wie viel ist {i} + {i}? — 問題 {i} 🎯 "quoted" \\ back',
            "answer": str(2 * i),
            "meta": {
                "tags": ["é", "ß", i % 7],
                "score": i / 3,
                "tiny": 1e-7 * (i + 1),
                "big": 123456789012345 + i,
                "nested": {"b": 1, "a": [1.5, None, True, {"y": i, "x": "ü"}]},
            },
            "alpha": None,
        }
        for i in range(n)
    ]


def main():
    weave.init(PROJECT)
    published = rows(int(os.environ.get("ROWS", "500")))
    ref = weave.publish(weave.Dataset(name="from-python", description="published by the Python SDK", rows=published))
    with open(os.environ["EXPECTED"], "w", encoding="utf-8") as out:
        json.dump(published, out, ensure_ascii=False)
    print("RESULT " + json.dumps({"uri": ref.uri(), "digest": ref.digest}))


if __name__ == "__main__":
    main()
