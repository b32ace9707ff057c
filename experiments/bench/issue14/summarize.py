# Medians per case of compare.sh's runs: old against new. Usage: summarize.py results.csv
import csv, statistics as st, collections, sys
rows=list(csv.reader(open(sys.argv[1])))[1:]
d=collections.defaultdict(lambda: collections.defaultdict(list))
for r in rows:
    if len(r)<7: continue
    d[r[0]][r[1]].append((float(r[3]), float(r[4]), int(r[5]), r[6]))
print("| case | wall old | wall new | CPU old (s) | CPU new (s) | CPU new/old | RSS old (MiB) | RSS new (MiB) | RSS new/old | same prediction |")
print("|---|---|---|---|---|---|---|---|---|---|")
for k,v in d.items():
    o=v['old']; n=v['new']
    if not o or not n: continue
    ow=st.median(x[0] for x in o); nw=st.median(x[0] for x in n)
    oc=st.median(x[1] for x in o); nc=st.median(x[1] for x in n)
    om=st.median(x[2] for x in o); nm=st.median(x[2] for x in n)
    print(f"| {k} | {ow:.2f} | {nw:.2f} | {oc:.2f} | {nc:.2f} | {nc/oc:.2f} | {om} | {nm} | {nm/om:.2f} | {'yes' if all(x[3]==o[0][3] for x in n) else 'NO'} |")
