#!/usr/bin/env python3
"""Regenerates the point-text test inputs (good mixed.txt + broken/)."""
import os
HERE = os.path.dirname(os.path.abspath(__file__))
B = os.path.join(HERE, "broken")
with open(os.path.join(HERE, "mixed.txt"), "w") as f:
    f.write("# control points: source x y z\n\n1 2 3\n  4.5,\t-5e-1, 6   # trailing comment\n7,8\r\n\t\n-0 1e300 -2.5E-3\n")
broken = {
  "nonnumeric.txt": "1 2 3\n1 two 3\n",
  "one_number.txt": "1 2 3\n\n5\n",
  "four_numbers.txt": "1 2 3 4\n",
  "double_comma.txt": "1,,2\n",
  "leading_comma.txt": ",1,2\n",
  "trailing_comma.txt": "1,2,\n",
  "nan.txt": "1 2 nan\n",
  "inf.txt": "1 inf 3\n",
  "overflow.txt": "1 2 1e999\n",
  "hex_junk.txt": "1 2 3x\n",
  "nul_byte.txt": "1 2 3\n4 5\0 6\n",
  "long_line.txt": "1 2 " + "3" * 70000 + "\n",
  "semicolon.txt": "1;2;3\n",
}
for k, v in broken.items():
    with open(os.path.join(B, k), "w") as f: f.write(v)
print(len(broken), "broken files")
