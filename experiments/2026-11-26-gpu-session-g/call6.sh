# Call 6: issue 24's loopy-dg, now verified at either layout, tuned on the H200 through NVIDIA
# OpenCL: every configuration of the default layout (9) and of element-fastest (3), each
# checked against numpy. About 60 s.
source experiments/2026-11-26-gpu-session-b/common.sh
dev=$(python3 -c "import json; print(next(d['id'] for d in json.load(open('$R/devices.json'))['devices'] if d['id'].startswith('opencl') and 'NVIDIA' in d['vendor'].upper()))")
for layout in node-fastest element-fastest; do
  timeout 240 python3 -m perfport tune loopy-dg --problem nelements=131072 layout=$layout \
    --device "$dev" --db "$R/dg.db" --json > "$R/dg-$layout.json" 2> "$R/dg-$layout.err"
  echo "$layout rc=$?"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['measured'], d['outcomes'], d['verification'], d['best'])" "$R/dg-$layout.json"
done
python3 -m perfport export --db "$R/dg.db" --format csv > "$R/dg.csv"
gzip -9 "$R/dg.db"
finish
