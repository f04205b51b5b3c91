"""bench/article.py's report: Markdown tables of CPU per request, requests/s,
latency, memory and bytes on the wire with folio / best-peer ratios, the SVG
plot, and the README block they are written into."""
import os
import re

from article_fixture import CODINGS, log
from article_servers import is_folio
from article_verify import BROWSER, wire_targets

HERE = os.path.dirname(os.path.abspath(__file__))
README_BEGIN = "<!-- article.py: begin -->"
README_END = "<!-- article.py: end -->"
def best_peer(med, cid, peers, metric, low):
    vals = [(med[(cid, p)][metric], p) for p in peers if (cid, p) in med]
    return (min if low else max)(vals) if vals else (None, None)


def ratios(med, cls, names):
    """{(class, folio name): {cpu, rps, p99: (ratio, best peer name)}}"""
    peers = [n for n in names if not is_folio(n)]
    out = {}
    for c in cls:
        for f in names:
            if not is_folio(f) or (c["id"], f) not in med:
                continue
            if not any((c["id"], p) in med for p in peers):
                continue  # no peer timed on this class (--servers, a coding it lacks)
            m = med[(c["id"], f)]
            d = {}
            for metric, low in (("cpu_us", True), ("rps", False), ("p99_ms", True)):
                v, p = best_peer(med, c["id"], peers, metric, low)
                d[metric] = (m[metric] / v if v else None, p)
            out[(c["id"], f)] = d
    return out


def report(servers, cls, med, rat, mem, args, meta):
    names = [s.name for s in servers]
    folios = [n for n in names if is_folio(n)]
    out = []
    w = out.append
    w(f"{meta['when']}; {meta['machine']}. wrk -t{args.wrk_threads} -c{args.connections} "
      f"--latency, {args.rounds} interleaved rounds of {args.duration} s per class and server "
      f"(after {args.warmup} s of warm-up each); medians over the rounds. Load average "
      f"{meta['load_start']} at the start, {meta['load_end']} at the end; the machine is shared "
      f"with other sessions, so absolute numbers move from run to run and only the ratios of one "
      f"run are compared. During the measured runs the server took a median of "
      f"{meta['server_cpus']:.2f} CPUs, wrk {meta['wrk_cpus']:.2f}, and other processes "
      f"{meta['other_cpus']:.2f} (up to {meta['other_max']:.2f}: that is the noise).\n")
    w("Server CPU per request (µs, utime + stime of all the server's processes) and requests/s; "
      "ratios folio / best peer of the same run (CPU: ≤ 1 is the target; req/s: ≥ 1):\n")
    hdr = "| class | " + " | ".join(names) + " | " + " | ".join(
        f"{f} CPU / best | {f} req/s / best" for f in folios) + " |"
    w(hdr)
    w("|---|" + "---:|" * (len(names) + 2 * len(folios)))
    for c in cls:
        row = []
        for n in names:
            m = med.get((c["id"], n))
            row.append("—" if not m else f"{m['cpu_us']:.1f} µs, {m['rps']:,.0f}/s"
                       + (f" ({m['errors']:.0f} err)" if m["errors"] else ""))
        for f in folios:
            r = rat.get((c["id"], f))
            row.append(f"**{r['cpu_us'][0]:.2f}** ({r['cpu_us'][1]})" if r else "—")
            row.append(f"**{r['rps'][0]:.2f}** ({r['rps'][1]})" if r else "—")
        w(f"| {c['label']} | " + " | ".join(row) + " |")
    w("")
    unmeasured = [(c, n) for c, n in meta["unmeasured"] if (c, n) not in med]
    if unmeasured:
        w("Not measured (wrk completed no response in any round; a 304 that carries its 200's "
          "`Content-Length`, as libmicrohttpd 0.9.75 writes it, leaves wrk's parser waiting for a "
          "body): " + ", ".join(f"{c} on {n}" for c, n in unmeasured) + ".\n")
    w("Latency p50 / p99 (ms, wrk --latency), ratio folio p99 / best peer p99 (≤ 1 is the target):\n")
    w("| class | " + " | ".join(names) + " | " + " | ".join(f"{f} p99 / best" for f in folios) + " |")
    w("|---|" + "---:|" * (len(names) + len(folios)))
    for c in cls:
        row = []
        for n in names:
            m = med.get((c["id"], n))
            row.append("—" if not m else f"{m['p50_ms']:.2f} / {m['p99_ms']:.2f}")
        for f in folios:
            r = rat.get((c["id"], f))
            row.append(f"**{r['p99_ms'][0]:.2f}** ({r['p99_ms'][1]})" if r else "—")
        w(f"| {c['label']} | " + " | ".join(row) + " |")
    w("")
    nginx = mem.get("nginx", {}).get("hwm")
    w("Peak RSS after all rounds (VmHWM summed over the server's processes: nginx's master and "
      "workers share pages, so it is counted more than once; folio and lighttpd peak while they "
      "make zstd 19 and brotli 11 of the 2.3 MB fragment) and RSS at the end:\n")
    w("| server | configuration | processes | peak RSS | / nginx | RSS at the end |")
    w("|---|---|---:|---:|---:|---:|")
    for s in servers:
        m = mem[s.name]
        w(f"| {s.name} | {s.label} | {m['procs']} | {m['hwm'] / 1024:.1f} MiB | "
          + (f"{m['hwm'] / nginx:.2f}" if nginx else "—") + f" | {m['rss'] / 1024:.1f} MiB |")
    w("")
    w("Versions: " + "; ".join(meta["versions"]) + ".")
    return "\n".join(out)


def timed_id(target, coding):
    """The timed class that measures wire target target in coding, if any."""
    ids = {("page-load", "gzip"): "page-load", ("page-load", "browser"): "page-load-browser",
           ("png", "browser"): "png", ("404", "browser"): "404"}
    return ids.get((target, coding), f"{target}-{coding}")


def wire_cell(w, coding, m):
    """One server's bytes for one coding, the coding it sent when that is not
    the one asked for (or the browser's pick), and its CPU per request."""
    cell = f"{w['wire']:,}"
    if coding == "browser" or w["sent"] != coding:
        cell = f"{w['sent']} {cell}"
    return cell + (f" · {m['cpu_us']:.1f} µs" if m else "")


def wire_report(servers, page, wire, med, cls):
    """The Markdown table of bytes on the wire (server × class × coding),
    with folio / fewest peer bytes, beside CPU per request."""
    names = [s.name for s in servers]
    folios = [n for n in names if is_folio(n)]
    peers = [n for n in names if not is_folio(n)]
    timed = {c["id"] for c in cls}
    out = ["Bytes on the wire per response: status line and header block plus body, as the client "
           "reads them, after the warm-up (a whole page load: its responses summed), each coding "
           "asked for alone (`Accept-Encoding: gzip`, `br`, `zstd`), and `browser`: Chromium's "
           f"`{BROWSER}`, with the coding each server chose. A server that does not offer a coding "
           "sends identity (named in the cell). Beside it, where that class is timed above, the "
           "server CPU per request. folio / fewest: folio's bytes over the fewest any peer sent "
           "in that coding (browser: in whatever it chose); < 1 is fewer bytes than every peer.\n",
           "| class | coding | " + " | ".join(names) + " | "
           + " | ".join(f"{f} / fewest" for f in folios) + " |",
           "|---|---|" + "---:|" * (len(names) + len(folios))]
    for tid, label, _, _, codings in wire_targets(page):
        for k in codings:
            cid = timed_id(tid, k)
            cells = [wire_cell(wire[(tid, k, n)], k,
                               med.get((cid, n)) if cid in timed else None) for n in names]
            fair = [(wire[(tid, k, p)]["wire"], p) for p in peers
                    if k in ("browser",) or wire[(tid, k, p)]["sent"] == k]
            for f in folios:
                best = min(fair) if fair else None
                cells.append(f"**{wire[(tid, k, f)]['wire'] / best[0]:.3f}** ({best[1]})"
                             if best else "—")
            out.append(f"| {label if k == codings[0] else ''} | {k} | " + " | ".join(cells) + " |")
    out += ["", "Header block of the page's response (bytes: status line, fields, blank line), "
            "per coding:\n", "| server | " + " | ".join(CODINGS + ("browser",)) + " |",
            "|---|" + "---:|" * (len(CODINGS) + 1)]
    for n in names:
        out.append(f"| {n} | " + " | ".join(str(wire[("page", k, n)]["header"])
                                            for k in CODINGS + ("browser",)) + " |")
    return "\n".join(out)


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def svg_plot(servers, cls, med, meta):
    """Two panels, one bar per server and class: CPU per request and req/s,
    each relative to the best peer of the class (1.0 = the best of nginx,
    lighttpd, h2o), with the absolute value written beside each bar."""
    names = [s.name for s in servers]
    peers = [n for n in names if not is_folio(n)]
    colours = {"nginx": "#2a9d8f", "lighttpd": "#e9c46a", "h2o": "#8d99ae"}
    folio_colours = ["#d62828", "#f77f00", "#7b2cbf", "#1d3557"]
    col = {}
    for n in names:
        col[n] = colours.get(n) or folio_colours[len([m for m in col if is_folio(m)]) % 4]
    bar_h, gap = 11, 14
    group_h = bar_h * len(names) + gap
    left, panel_w, label_w = 130, 330, 100
    top = 56
    height = top + group_h * len(cls) + 50
    width = left + 2 * (panel_w + label_w) + 30
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
         f'width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
         f'<rect width="{width}" height="{height}" fill="#fff"/>',
         f'<text x="10" y="18" font-size="14" font-weight="bold">folio against nginx, lighttpd, h2o '
         f'on a real-article-shaped fixture</text>',
         f'<text x="10" y="34" fill="#555">{esc(meta["short"])}</text>']
    panels = [("cpu_us", "server CPU per request, ÷ best peer (lower is better)", "{:.1f} µs", True),
              ("rps", "requests/s, ÷ best peer (higher is better)", "{:,.0f}/s", False)]
    for pi, (metric, title, fmt, low) in enumerate(panels):
        x0 = left + pi * (panel_w + label_w)
        vmax = 2.0
        sx = panel_w / vmax
        o.append(f'<text x="{x0}" y="{top - 6}" font-weight="bold">{esc(title)}</text>')
        for tick in (0, 0.5, 1.0, 1.5, 2.0):
            x = x0 + tick * sx
            dash = ' stroke-dasharray="4 3"' if tick == 1.0 else ""
            o.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - 40}" '
                     f'stroke="{"#333" if tick == 1.0 else "#ddd"}"{dash}/>')
            o.append(f'<text x="{x:.1f}" y="{height - 28}" text-anchor="middle" fill="#555">{tick:g}×</text>')
        for ci, c in enumerate(cls):
            y0 = top + ci * group_h + 4
            vals = [med[(c["id"], p)][metric] for p in peers if (c["id"], p) in med]
            if not vals:
                continue
            best = min(vals) if low else max(vals)
            if pi == 0:
                o.append(f'<text x="{left - 8}" y="{y0 + group_h / 2 - 4:.1f}" text-anchor="end">'
                         f'{esc(c["id"])}</text>')
            for ni, n in enumerate(names):
                m = med.get((c["id"], n))
                if not m:
                    continue
                rel = m[metric] / best if best else 0
                y = y0 + ni * bar_h
                wbar = min(rel, vmax) * sx
                o.append(f'<rect x="{x0}" y="{y}" width="{wbar:.1f}" height="{bar_h - 2}" '
                         f'fill="{col[n]}"><title>{esc(n)}: {fmt.format(m[metric])} '
                         f'({rel:.2f}×)</title></rect>')
                o.append(f'<text x="{x0 + wbar + 3:.1f}" y="{y + bar_h - 3}" font-size="9" fill="#333">'
                         f'{rel:.2f} · {fmt.format(m[metric])}</text>')
    lx = 10
    for n in names:
        o.append(f'<rect x="{lx}" y="{height - 16}" width="10" height="10" fill="{col[n]}"/>'
                 f'<text x="{lx + 14}" y="{height - 7}">{esc(n)}</text>')
        lx += 24 + 7 * len(n)
    o.append("</svg>")
    return "\n".join(o) + "\n"


def write_readme(text, begin=README_BEGIN, end=README_END):
    """Puts text between the begin and end markers of bench/README.md (at
    its end when the markers are not there yet)."""
    path = os.path.join(HERE, "README.md")
    with open(path) as f:
        doc = f.read()
    block = f"{begin}\n{text}\n{end}"
    if begin in doc and end in doc:
        doc = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, doc, flags=re.S)
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(doc)
    log("wrote the report into " + path)
