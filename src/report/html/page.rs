//! The fixed parts of the report page: the head with its inline stylesheet (series
//! colours, marks, legends, tables) and the tail with the layout self-check script.

/// Everything before the first section: doctype, metadata and the inline stylesheet.
pub const HEAD: &str = r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>rtload report</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;max-width:1000px;margin:24px auto;padding:0 16px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:36px}
.kind{font-size:12px;font-weight:normal;background:#eef;border-radius:4px;padding:1px 6px;margin-left:8px}
.kind.unknown,.unknown{background:#fee}
p.unknown{padding:8px;border-radius:4px}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:0 12px;font-size:12px;color:#555}dl.meta dd{margin:0}
figure{margin:16px 0;border:1px solid #e3e3e3;border-radius:6px;padding:8px 8px 4px}
figcaption{font-size:12px;color:#555;margin-top:4px}
.nodata{color:#888;font-style:italic}
svg.chart{display:block;width:100%;height:auto}
svg text{font-size:11px;fill:#444}svg .axis-title{font-size:12px;fill:#222}
.grid{stroke:#eee}.frame{stroke:#888;fill:none}
.s0{--c:#1f77b4}.s1{--c:#ff7f0e}.s2{--c:#2ca02c}.s3{--c:#9467bd}.s4{--c:#8c564b}.s5{--c:#e377c2}.s6{--c:#17becf}.s7{--c:#bcbd22}
.mark.line{fill:none;stroke:var(--c);stroke-width:1.8}.mark.line.dash{stroke-dasharray:6 4}.mark.dot{fill:var(--c)}.mark.dot.hollow{fill:#fff;stroke:var(--c);stroke-width:1.5}
.pmark{stroke:#555;stroke-width:1.2}svg .pmark-label{font-size:10px;fill:#555}
.mark.hl{fill:none;stroke:#2ca02c;stroke-width:3}.mark.fail{fill:#fff;stroke:#d62728;stroke-width:2}
.failed{--c:#d62728}.extent{--c:#9ecae1}
.k0{--c:#b0b0b0}.k1{--c:#6baed6}.k2{--c:#a1d99b}.k3{--c:#ff7f0e}.k4{--c:#2ca02c}.k5{--c:#e377c2}.k6{--c:#8c564b}.k7{--c:#bcbd22}.kx{--c:#9467bd}
.mark.span{fill:var(--c)}.mark.bar{fill:var(--c);stroke:#fff;stroke-width:.5}
.mark.warn{fill:none;stroke:#e6a700;stroke-width:2;stroke-dasharray:3 2}svg .pt-label{font-size:10px;fill:#555}
.sw.warn{background:none;border:2px dashed #e6a700;border-radius:50%;width:8px;height:8px}.sw.fail{background:#fff;border:2px solid #d62728;border-radius:50%;width:8px;height:8px}
.ref{stroke:#d62728;stroke-dasharray:6 4;stroke-width:1.5}svg .ref-label{fill:#d62728}
.ref.cap{stroke:#2ca02c}svg .ref-label.cap{fill:#2ca02c}
.band{fill:#f3f3f3}svg .band-label{fill:#888}
ul.legend{list-style:none;padding:0;margin:4px 0;font-size:12px;display:flex;flex-wrap:wrap;gap:4px 14px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;background:var(--c)}
.sw.dash{width:14px;height:0;border-radius:0;background:none;border-top:2px dashed var(--c);vertical-align:middle}
table{border-collapse:collapse;font-size:12px;margin:12px 0}caption{text-align:left;font-weight:600;padding:4px 0;white-space:nowrap}
td,th{border:1px solid #e3e3e3;padding:2px 8px;text-align:left}td:last-child{text-align:right;font-variant-numeric:tabular-nums}
td.pass{color:#2ca02c}td.fail{color:#d62728}
td.origin{color:#555;text-align:left;max-width:360px}
table.errors td:last-child{text-align:left;font-variant-numeric:normal}
pre.err{white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0;font-size:12px;background:#fdecea;padding:4px 6px;border-radius:3px}
div.warnings{padding:4px 10px;border-radius:4px;background:#fff3cd;border:1px solid #e0c36a;margin:12px 0}
p.verdict{font-size:15px;padding:6px 10px;border-radius:4px;background:#f3f3f3}p.verdict.pass{background:#e8f5e9}p.verdict.fail{background:#fdecea}
p.banner{padding:8px;border-radius:4px;background:#fff3cd;border:1px solid #e0c36a}
tr.short td{background:#fff3cd}tr.breaks td:last-child{color:#d62728}tr.holds td:last-child{color:#2ca02c}
td:last-child.verdict{text-align:left}p.capacity{font-size:15px;padding:6px 10px;border-radius:4px;background:#e8f5e9}p.capacity.none{background:#fdecea}
</style></head><body>
"#;

/// Layout self-check: measure every chart's marks, and list every `<text>` that pokes out
/// of its SVG, into `body[data-chartcheck]`.
pub const TAIL: &str = r#"<script>
(function(){var out=[];document.querySelectorAll('svg.chart').forEach(function(s){
var m=s.querySelectorAll('path.mark,rect.mark,circle.mark,line.mark'),x0=1/0,y0=1/0,x1=-1/0,y1=-1/0;
m.forEach(function(e){var b=e.getBBox();x0=Math.min(x0,b.x);y0=Math.min(y0,b.y);x1=Math.max(x1,b.x+b.width);y1=Math.max(y1,b.y+b.height);});
var v=s.viewBox.baseVal,n=m.length,r=s.getBoundingClientRect(),t=[];
s.querySelectorAll('text').forEach(function(e){var b=e.getBoundingClientRect();
if(b.left<r.left-1||b.top<r.top-1||b.right>r.right+1||b.bottom>r.bottom+1)t.push(e.textContent);});
out.push({chart:s.getAttribute('data-chart'),marks:n,width:n?x1-x0:0,height:n?y1-y0:0,
inside:n>0&&x0>=v.x-1&&y0>=v.y-1&&x1<=v.x+v.width+1&&y1<=v.y+v.height+1,texts_outside:t});});
document.body.setAttribute('data-chartcheck',JSON.stringify(out));})();
</script>
</body></html>
"#;
