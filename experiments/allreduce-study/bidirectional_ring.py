"""Writes a bidirectional ring all-reduce as a dtsim algorithm file (sim/collectives/ALGORITHMS.md).

Usage: bidirectional_ring.py P OUT.json
Two rings run at once on two channels, each on half of the buffer (2P chunks): ring A sends
rank i -> i+1 (chunks 0..P-1), ring B rank i -> i-1 (chunks P..2P-1). Each is a ring all-reduce:
at step s, position m of a ring sends its chunk (m - s - 1) mod P to the next position, adding
during the first P-1 steps and copying during the last P-1. A network whose links carry both
directions at full rate (a torus) gives both rings their own bandwidth; one link per host (a
fat-tree) shares it between them.
"""
import json
import sys


def algorithm(p):
    steps = []
    for s in range(2 * (p - 1)):
        step = []
        for i in range(p):
            reduce = s < p - 1
            # ring A: position i is rank i
            step.append({"src": i, "dst": (i + 1) % p, "chunk": (i - s - 1) % p,
                         "reduce": reduce, "channel": 0})
            # ring B: position m is rank -m (mod p); rank i is position (-i) mod p
            m = (-i) % p
            step.append({"src": i, "dst": (i - 1) % p, "chunk": p + (m - s - 1) % p,
                         "reduce": reduce, "channel": 1})
        steps.append(step)
    return {"format": "dtsim-collective-algorithm", "version": 1,
            "name": f"bidirectional ring, {p} ranks", "operation": "all-reduce", "ranks": p,
            "chunks": 2 * p, "steps": steps}


if __name__ == "__main__":
    if len(sys.argv) != 3 or not sys.argv[1].isdigit() or int(sys.argv[1]) < 2:
        sys.exit("usage: bidirectional_ring.py P OUT.json (P >= 2)")
    with open(sys.argv[2], "w") as out:
        json.dump(algorithm(int(sys.argv[1])), out)
