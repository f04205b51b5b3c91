#!/usr/bin/env python3
"""Generate the article's figures, raster images, data files and the large chart fragment.

Everything here is drawn from scratch by this script (python3 standard library only), so the
output is reproducible: run `python3 tests/article/gen_assets.py` from the repo root and the
committed files under assets/ and fragments/config-sweep.html are rewritten byte for byte.

The "sweep" data is produced by a deliberately small analytical cost model (see `toy_step`)
written for the article. It is an illustration of the trade-offs, not a measurement.
"""
import json, math, os, random, struct, zlib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
A = os.path.join(ROOT, 'assets')
C = dict(param='#4c78a8', grad='#f58518', opt='#54a24b', act='#e45756', comm='#b279a2',
         idle='#bab0ac', fwd='#4c78a8', bwd='#b5651d', gold='#eeca3b')

STYLE = """<style>
text{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;fill:#1f2430;font-size:14px}
.s{font-size:13px}.xs{font-size:11.5px}.b{font-weight:650}.t{font-size:16px;font-weight:650}.m{font-family:ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace}
.ln{stroke:#3d4452;fill:none}.grid{stroke:#d5d8de;stroke-width:1}.box{fill:#f4f5f7;stroke:#9aa1ad}.mute{fill:#6b7280}
.lt{fill:#fff}
@media (prefers-color-scheme:dark){text{fill:#e3e6eb}.ln{stroke:#c3c8d2}.grid{stroke:#3a404b}.box{fill:#262b34;stroke:#6b7280}.mute{fill:#a3aab5}}
</style>"""


def esc(s):
    return s.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;').replace('"', '&quot;')


def svg(w, h, body, title, desc, extra_defs=''):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
            f'role="img" aria-labelledby="t d">\n<title id="t">{esc(title)}</title>\n<desc id="d">{esc(desc)}</desc>\n'
            f'{STYLE}\n<defs><marker id="ah" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
            f'<path d="M0 0L10 5L0 10z" fill="#6b7280"/></marker>{extra_defs}</defs>\n{body}\n</svg>\n')


def txt(x, y, s, cls='', anchor='start', extra=''):
    c = f' class="{cls}"' if cls else ''
    a = '' if anchor == 'start' else f' text-anchor="{anchor}"'
    return f'<text x="{x:g}" y="{y:g}"{c}{a}{extra}>{esc(s)}</text>'


def rect(x, y, w, h, fill, extra=''):
    return f'<rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" fill="{fill}"{extra}/>'


def write(path, data, mode='w'):
    full = os.path.join(ROOT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, mode) as f:
        f.write(data)
    print(f'{os.path.getsize(full):>9}  {path}')


# ---------------------------------------------------------------------------------------------
# Figure 1: where the bytes go for a 7B model trained with bf16 + Adam
def fig_memory_breakdown():
    rows = [('7B', 7e9), ('13B', 13e9), ('70B', 70e9)]
    parts = [('bf16 parameters', 2, C['param']), ('bf16 gradients', 2, C['grad']),
             ('fp32 master weights', 4, C['opt']), ('Adam first moment m', 4, '#88c77f'),
             ('Adam second moment v', 4, '#b5dcae')]
    W, H = 760, 310
    x0, scale = 150, 520 / 1120  # px per GB, 70B*16 = 1120 GB
    b = [txt(20, 28, 'Model states in mixed-precision training with Adam (16 bytes per parameter)', 't')]
    for i, (name, n) in enumerate(rows):
        y = 60 + i * 56
        b.append(txt(x0 - 12, y + 24, name + ' parameters', 'b', 'end'))
        x = x0
        for (pname, bytes_, col) in parts:
            w = n * bytes_ / 1e9 * scale
            b.append(rect(x, y, w, 36, col))
            x += w
        b.append(txt(x + 8, y + 24, f'{n * 16 / 1e9:,.0f} GB', 's'))
    # the 80 GB line
    gx = x0 + 80 * scale
    b.append(f'<line x1="{gx}" y1="48" x2="{gx}" y2="230" stroke="#e45756" stroke-dasharray="5 4" stroke-width="2"/>')
    b.append(txt(gx + 6, 244, 'one 80 GB GPU', 's'))
    for k, (pname, bytes_, col) in enumerate(parts):
        lx, ly = 20 + (k % 3) * 240, 262 + (k // 3) * 22
        b.append(rect(lx, ly, 14, 14, col))
        b.append(txt(lx + 20, ly + 12, f'{pname} ({bytes_} B)', 'xs'))
    return svg(W, H, '\n'.join(b), 'Model-state memory for 7B, 13B and 70B parameter models',
               'Stacked horizontal bars. Each parameter costs 2 bytes of bf16 weight, 2 bytes of bf16 gradient, '
               '4 bytes of fp32 master weight and 8 bytes of Adam moments: 112 GB for 7B, 208 GB for 13B and '
               '1120 GB for 70B, against a dashed line at 80 GB, the memory of one GPU.')


# Figure 2: number formats, bit by bit
def fig_formats():
    fmts = [('fp32', 1, 8, 23, '±3.4e38, ~7 decimal digits'), ('bf16', 1, 8, 7, 'same range as fp32, ~2.4 digits'),
            ('fp16', 1, 5, 10, 'max 65 504, ~3.3 digits'), ('fp8 E4M3', 1, 4, 3, 'max 448'), ('fp8 E5M2', 1, 5, 2, 'max 57 344')]
    W, H = 760, 290
    cell = 12
    b = [txt(20, 28, 'Floating-point formats used in training: sign, exponent, mantissa', 't')]
    for i, (name, s, e, m, note) in enumerate(fmts):
        y = 52 + i * 44
        b.append(txt(20, y + 16, name, 'b'))
        x = 110
        for k in range(s + e + m):
            col = '#e45756' if k < s else ('#4c78a8' if k < s + e else '#54a24b')
            b.append(rect(x + k * cell, y, cell - 2, 24, col, ' rx="2"'))
        b.append(txt(110 + 32 * cell + 14, y + 10, f'{s + e + m} bits: {e} exponent, {m} mantissa', 's'))
        b.append(txt(110 + 32 * cell + 14, y + 25, note, 'xs mute'))
    for j, (lab, col) in enumerate([('sign', '#e45756'), ('exponent (range)', '#4c78a8'), ('mantissa (precision)', '#54a24b')]):
        b.append(rect(110 + j * 170, 270, 12, 12, col))
        b.append(txt(128 + j * 170, 281, lab, 'xs'))
    return svg(W, H, '\n'.join(b), 'Bit layouts of fp32, bf16, fp16 and two fp8 formats',
               'bf16 keeps the 8 exponent bits of fp32 and drops mantissa bits, so it has the same range with less '
               'precision; fp16 has 5 exponent bits and a much smaller range; the fp8 variants trade range (E5M2) '
               'against precision (E4M3).')


# Figure 3: ring all-reduce as reduce-scatter + all-gather
def fig_ring_allreduce():
    W, H = 760, 330
    n = 4
    cols = ['#4c78a8', '#f58518', '#54a24b', '#e45756']
    b = [txt(20, 28, 'Ring all-reduce on 4 GPUs = reduce-scatter, then all-gather', 't')]
    phases = [('start: each GPU has its own full gradient', lambda g, c: [g]),
              ('after reduce-scatter (3 steps): GPU i owns the sum of chunk i', lambda g, c: list(range(n)) if c == g else None),
              ('after all-gather (3 more steps): everyone has every summed chunk', lambda g, c: list(range(n)))]
    for pi, (label, fn) in enumerate(phases):
        px = 20 + pi * 250
        b.append(txt(px, 60, label.split(':')[0], 'b s'))
        b.append(txt(px, 76, label.split(':')[1].strip(), 'xs mute'))
        for g in range(n):
            y = 92 + g * 52
            b.append(txt(px, y + 22, f'GPU {g}', 's'))
            for c in range(n):
                x = px + 50 + c * 44
                who = fn(g, c)
                if who is None:
                    b.append(rect(x, y, 40, 32, 'none', ' class="box" stroke-dasharray="3 3"'))
                elif len(who) == 1:
                    b.append(rect(x, y, 40, 32, cols[g], ' opacity="0.35" rx="3"'))
                    b.append(txt(x + 20, y + 21, f'g{g}[{c}]', 'xs', 'middle'))
                else:
                    for k in range(n):
                        b.append(rect(x, y + k * 8, 40, 8, cols[k], ' opacity="0.9"'))
                    b.append(txt(x + 20, y + 21, f'Σ[{c}]', 'xs b', 'middle', ' style="fill:#fff"'))
        if pi < 2:
            b.append(f'<path d="M{px + 232} 190 h14" class="ln" stroke-width="2" marker-end="url(#ah)"/>')
    b.append(txt(20, 312, 'Each GPU sends and receives 2(n−1)/n of the gradient size in total, nearly independent of n for large n.', 's'))
    return svg(W, H, '\n'.join(b), 'Ring all-reduce on four GPUs',
               'Three panels. Each GPU starts with its own full gradient split into four chunks. After a '
               'reduce-scatter of three steps, GPU i holds the sum of chunk i over all GPUs. After an all-gather '
               'of three more steps, every GPU holds all four summed chunks.')


# Figure 4: ZeRO stages, per-GPU memory on 4 GPUs
def fig_zero():
    W, H = 760, 366
    N = 4
    stages = [('Plain data parallel', 1, 1, 1), ('ZeRO-1: shard optimizer states', 1, 1, N),
              ('ZeRO-2: + shard gradients', 1, N, N), ('ZeRO-3 / FSDP: + shard parameters', N, N, N)]
    b = [txt(20, 28, 'What each of 4 data-parallel GPUs stores (Ψ = number of parameters)', 't')]
    unit = 33  # px per 1Ψ byte
    for i, (name, dp, dg, do) in enumerate(stages):
        y = 56 + i * 68
        b.append(txt(20, y + 12, name, 'b s'))
        x = 20
        segs = [(2 / dp, C['param'], 'params'), (2 / dg, C['grad'], 'grads'), (12 / do, C['opt'], 'optimizer')]
        for (v, col, lab) in segs:
            w = v * unit
            b.append(rect(x, y + 20, w, 28, col, ' rx="2"'))
            if w > 50:
                b.append(txt(x + w / 2, y + 39, lab, 'xs', 'middle', ' style="fill:#fff"'))
            x += w + 2
        tot = 2 / dp + 2 / dg + 12 / do
        b.append(txt(x + 10, y + 39, f'{tot:g}Ψ bytes per GPU', 's'))
        if i:
            b.append(txt(740, y + 39, f'{16 / tot:.1f}× smaller', 's mute', 'end'))
    b.append(txt(20, 334, 'With d data-parallel GPUs the ZeRO-3 share is 16Ψ/d: a 70B model needs 1120 GB of model states in total,', 's'))
    b.append(txt(20, 352, 'which is 17.5 GB per GPU on 64 GPUs, before any activations.', 's'))
    return svg(W, H, '\n'.join(b), 'Per-GPU memory under plain data parallelism and ZeRO stages 1 to 3',
               'Four stacked bars for 4 GPUs: plain data parallel keeps 16 bytes per parameter on every GPU; '
               'ZeRO-1 shards the 12 bytes of optimizer state, leaving 7 bytes; ZeRO-2 also shards gradients, '
               'leaving 5.5 bytes; ZeRO-3 shards everything, leaving 4 bytes per parameter per GPU.')


# Figure 5: tensor-parallel MLP
def fig_tp_mlp():
    W, H = 760, 330
    b = [txt(20, 28, 'A tensor-parallel MLP on 2 GPUs: split A by columns, B by rows', 't')]
    # X input
    b.append(rect(30, 130, 60, 70, '#9aa1ad', ' rx="4"'))
    b.append(txt(60, 170, 'X', 'b', 'middle', ' style="fill:#fff"'))
    b.append(txt(60, 222, 'b·s × h', 'xs mute', 'middle'))
    b.append(rect(120, 120, 40, 90, C['comm'], ' rx="4" opacity="0.85"'))
    b.append(txt(140, 170, 'f', 'b', 'middle', ' style="fill:#fff"'))
    b.append(txt(140, 236, 'identity fwd', 'xs', 'middle'))
    b.append(txt(140, 250, 'all-reduce bwd', 'xs', 'middle'))
    b.append('<path d="M92 165 h24" class="ln" marker-end="url(#ah)"/>')
    for g, y in enumerate([60, 190]):
        col = ['#4c78a8', '#f58518'][g]
        b.append(f'<path d="M162 165 L{200} {y + 35}" class="ln" marker-end="url(#ah)"/>')
        b.append(rect(205, y, 90, 70, col, ' rx="4"'))
        b.append(txt(250, y + 30, f'X·A{g + 1}', 'b', 'middle', ' style="fill:#fff"'))
        b.append(txt(250, y + 50, 'h × 4h/2', 'xs', 'middle', ' style="fill:#fff"'))
        b.append(f'<path d="M297 {y + 35} h30" class="ln" marker-end="url(#ah)"/>')
        b.append(rect(330, y, 70, 70, col, ' rx="4" opacity="0.75"'))
        b.append(txt(365, y + 40, 'GeLU', 'b s', 'middle', ' style="fill:#fff"'))
        b.append(f'<path d="M402 {y + 35} h30" class="ln" marker-end="url(#ah)"/>')
        b.append(rect(435, y, 90, 70, col, ' rx="4"'))
        b.append(txt(480, y + 30, f'Y{g + 1}·B{g + 1}', 'b', 'middle', ' style="fill:#fff"'))
        b.append(txt(480, y + 50, '4h/2 × h', 'xs', 'middle', ' style="fill:#fff"'))
        b.append(f'<path d="M527 {y + 35} L 575 165" class="ln" marker-end="url(#ah)"/>')
        b.append(txt(20 if g == 0 else 20, 0, '', ''))
    b.append(rect(580, 120, 40, 90, C['comm'], ' rx="4" opacity="0.85"'))
    b.append(txt(600, 170, 'g', 'b', 'middle', ' style="fill:#fff"'))
    b.append(txt(600, 236, 'all-reduce fwd', 'xs', 'middle'))
    b.append(txt(600, 250, 'identity bwd', 'xs', 'middle'))
    b.append('<path d="M622 165 h24" class="ln" marker-end="url(#ah)"/>')
    b.append(rect(650, 130, 60, 70, '#9aa1ad', ' rx="4"'))
    b.append(txt(680, 170, 'Z', 'b', 'middle', ' style="fill:#fff"'))
    b.append(txt(20, 300, 'GeLU is element-wise, so it runs on each half without talking; only the sum after B needs one all-reduce.', 's'))
    b.append(txt(20, 318, 'Attention is split the same way: heads go to GPUs (column split of Q, K, V), the output projection is row-split.', 's'))
    return svg(W, H, '\n'.join(b), 'Tensor-parallel MLP block across two GPUs',
               'Input X passes an operator f (identity forward, all-reduce backward), is multiplied by column halves '
               'A1 and A2 on two GPUs, goes through GeLU independently, is multiplied by row halves B1 and B2, and '
               'the partial results are summed by operator g (all-reduce forward, identity backward).')


# Figure 6: sequence parallelism layout
def fig_sp():
    W, H = 760, 250
    b = [txt(20, 28, 'Tensor + sequence parallelism: activations are always split one way or the other', 't')]
    blocks = [('LayerNorm', 'seq-split', '#72b7b2'), ('all-gather', 'comm', C['comm']), ('Attention', 'head-split', '#4c78a8'),
              ('reduce-scatter', 'comm', C['comm']), ('Dropout + add + LayerNorm', 'seq-split', '#72b7b2'),
              ('all-gather', 'comm', C['comm']), ('MLP', 'hidden-split', '#f58518'), ('reduce-scatter', 'comm', C['comm'])]
    x = 20
    widths = [78, 74, 84, 100, 110, 74, 64, 100]
    for (name, kind, col), w in zip(blocks, widths):
        h = 46 if kind != 'comm' else 30
        y = 80 if kind != 'comm' else 88
        b.append(rect(x, y, w, h, col, ' rx="5"'))
        words = name.split(' + ') if len(name) > 14 else [name]
        for k, wd in enumerate(words):
            b.append(txt(x + w / 2, y + h / 2 + 4 - 7 * (len(words) - 1) + 14 * k, wd, 'xs b', 'middle', ' style="fill:#fff"'))
        lab = {'seq-split': 'split along s', 'head-split': 'split by heads', 'hidden-split': 'split along 4h', 'comm': ''}[kind]
        if lab:
            b.append(txt(x + w / 2, 146, lab, 'xs mute', 'middle'))
        x += w + 6
    b.append(txt(20, 190, 'Sequence-parallel regions hold s/t tokens per GPU; tensor-parallel regions hold all s tokens', 's'))
    b.append(txt(20, 209, 'but 1/t of the features. An all-reduce = reduce-scatter + all-gather, so the communication volume', 's'))
    b.append(txt(20, 228, 'is the same as plain tensor parallelism, but no GPU ever stores a full, unsplit activation.', 's'))
    return svg(W, H, '\n'.join(b), 'Layout of a transformer layer under tensor and sequence parallelism',
               'A row of blocks: LayerNorm split along the sequence, an all-gather, attention split by heads, a '
               'reduce-scatter, dropout and LayerNorm split along the sequence, an all-gather, the MLP split along '
               'its hidden dimension, and a final reduce-scatter.')


# Figure 7: ring attention
def fig_ring_attention():
    W, H = 760, 340
    n = 4
    cols = ['#4c78a8', '#f58518', '#54a24b', '#e45756']
    b = [txt(20, 28, 'Ring attention on 4 GPUs: queries stay, key/value blocks travel', 't')]
    for step in range(n):
        px = 20 + step * 185
        b.append(txt(px, 58, f'step {step + 1}', 'b s'))
        for g in range(n):
            y = 70 + g * 46
            b.append(txt(px, y + 22, f'GPU{g}', 'xs'))
            b.append(rect(px + 40, y, 50, 32, cols[g], ' rx="3"'))
            b.append(txt(px + 65, y + 21, f'Q{g}', 'xs b', 'middle', ' style="fill:#fff"'))
            kv = (g - step) % n
            causal_skip = kv > g
            if causal_skip:     # masked: a pale tile with a dashed outline, labelled in the text colour
                b.append(rect(px + 96, y, 60, 32, cols[kv], f' rx="3" fill-opacity="0.22" stroke="{cols[kv]}" stroke-dasharray="3 2"'))
                b.append(txt(px + 126, y + 21, f'K{kv}V{kv}', 'xs b', 'middle'))
            else:
                b.append(rect(px + 96, y, 60, 32, cols[kv], ' rx="3"'))
                b.append(txt(px + 126, y + 21, f'K{kv}V{kv}', 'xs b', 'middle', ' style="fill:#fff"'))
        if step < n - 1:
            b.append(f'<path d="M{px + 162} 150 h16" class="ln" stroke-width="2" marker-end="url(#ah)"/>')
    b.append(txt(20, 272, 'Each step: compute attention of the local Q block against the visiting K,V block, fold it into a running softmax,', 's'))
    b.append(txt(20, 290, 'and pass the K,V block to the next GPU while the next one arrives. Pale, dashed blocks are fully masked (causal):', 's'))
    b.append(txt(20, 308, 'GPU0 idles in three of four steps while GPU3 works in all of them; hence the zig-zag split (chunks i and 2c−1−i).', 's'))
    return svg(W, H, '\n'.join(b), 'Ring attention across four GPUs in four steps',
               'Each GPU keeps its query block and, in each of four steps, receives the next key/value block from its '
               'neighbour in the ring. Under a causal mask the blocks from later positions are skipped, which '
               'leaves early GPUs idle unless the sequence is split in a load-balanced zig-zag order.')


# Figure 8 (wide): pipeline schedules
def fig_pipeline(p=4, m=8):
    W = 1060
    H = 470
    u = 26  # px per time unit (forward = 1, backward = 2); type sized for a band about 830 px wide
    big = ' style="font-size:14px"'
    b = [txt(20, 30, f'Pipeline schedules with p = {p} stages and m = {m} micro-batches (forward = 1 unit, backward = 2 units)', 't', extra=' style="font-size:17px"')]

    def lane(y0, label, events, total):
        b.append(txt(20, y0 - 12, label, 'b', extra=big))
        for s in range(p):
            y = y0 + s * 26
            b.append(txt(14, y + 16, f'stage {s}', '', extra=' style="font-size:13px"'))
            b.append(rect(80, y, total * u, 22, 'none', ' class="box"'))
        for (s, t, d, kind, mb) in events:
            col = C['fwd'] if kind == 'F' else C['bwd']
            b.append(rect(80 + t * u, y0 + s * 26, d * u - 1, 22, col, ' rx="2"'))
            b.append(txt(80 + t * u + d * u / 2, y0 + s * 26 + 16, str(mb + 1), 'b', 'middle', ' style="fill:#fff;font-size:12.5px"'))
        busy = sum(d for (_, _, d, _, _) in events)
        frac = 1 - busy / (total * p)
        b.append(txt(80 + total * u + 10, y0 + 50, f'idle: {frac * 100:.0f}%', 'b', extra=big))

    # GPipe: all forwards, then all backwards
    ev = []
    for s in range(p):
        for i in range(m):
            ev.append((s, s + i, 1, 'F', i))
    tf = p - 1 + m
    for s in range(p):
        for i in range(m):
            ev.append((s, tf + (p - 1 - s) * 2 + i * 2, 2, 'B', m - 1 - i))
    total = tf + 2 * (p - 1 + m)
    lane(70, 'GPipe: all forwards, then all backwards (stores m micro-batches of activations)', ev, total)

    # 1F1B via a tiny simulator
    ev = simulate_1f1b(p, m)
    total2 = max(t + d for (_, t, d, _, _) in ev)
    lane(250, '1F1B: after a warm-up, alternate one forward and one backward (stores at most p)', ev, total2)
    b.append(rect(80, 392, 16, 16, C['fwd']))
    b.append(txt(104, 405, 'forward of micro-batch k', '', extra=big))
    b.append(rect(330, 392, 16, 16, C['bwd']))
    b.append(txt(354, 405, 'backward of micro-batch k', '', extra=big))
    b.append(txt(80, 438, f'Both idle for (p−1)/(m+p−1) = {(p - 1) / (m + p - 1) * 100:.0f}% of the step; 1F1B just needs far less activation memory.', '', extra=big))
    return svg(W, H, '\n'.join(b), 'GPipe and 1F1B pipeline schedules',
               'Two timelines of four pipeline stages processing eight micro-batches. Both have the same idle '
               'bubble at the start and end; GPipe runs all forward passes before all backward passes, while 1F1B '
               'alternates forward and backward after a warm-up, so fewer activations are alive at once.')


def simulate_1f1b(p, m, f=1, bw=2):
    """Event-driven 1F1B: stage s warms up with (p-1-s) forwards, then alternates B and F."""
    order = []
    for s in range(p):
        warm = min(p - 1 - s, m)
        seq = [('F', i) for i in range(warm)]
        fi, bi = warm, 0
        while bi < m:
            if fi < m:
                seq.append(('F', fi)); fi += 1
            seq.append(('B', bi)); bi += 1
        order.append(seq)
    done = {}
    free = [0] * p
    idx = [0] * p
    ev = []
    remaining = sum(len(o) for o in order)
    while remaining:
        progressed = False
        for s in range(p):
            if idx[s] >= len(order[s]):
                continue
            kind, i = order[s][idx[s]]
            if kind == 'F':
                dep = done.get(('F', s - 1, i), 0) if s > 0 else 0
                if s > 0 and ('F', s - 1, i) not in done:
                    continue
                d = f
            else:
                if s < p - 1 and ('B', s + 1, i) not in done:
                    continue
                if ('F', s, i) not in done:
                    continue
                dep = done.get(('B', s + 1, i), 0) if s < p - 1 else done[('F', s, i)]
                d = bw
            t = max(free[s], dep)
            ev.append((s, t, d, kind, i))
            done[(kind, s, i)] = t + d
            free[s] = t + d
            idx[s] += 1
            remaining -= 1
            progressed = True
        assert progressed
    return ev


# Figure 9: MoE all-to-all
def fig_moe():
    W, H = 760, 320
    cols = ['#4c78a8', '#f58518', '#54a24b', '#e45756']
    b = [txt(20, 28, 'Expert parallelism: 8 experts on 4 GPUs with top-2 routing', 't')]
    rnd = random.Random(7)
    for g in range(4):
        x = 30 + g * 185
        b.append(txt(x, 60, f'GPU {g}', 'b s'))
        for k in range(6):
            b.append(rect(x + k * 24, 70, 20, 20, cols[g], ' rx="3"'))
        b.append(txt(x, 106, 'tokens', 'xs mute'))
        for e in range(2):
            ex = 2 * g + e
            b.append(rect(x + e * 75, 220, 68, 44, '#9aa1ad', ' rx="6"'))
            b.append(txt(x + e * 75 + 34, 247, f'expert {ex}', 'xs b', 'middle', ' style="fill:#fff"'))
    for g in range(4):
        for k in range(6):
            for _ in range(2):
                ex = rnd.randrange(8)
                x1 = 30 + g * 185 + k * 24 + 10
                x2 = 30 + (ex // 2) * 185 + (ex % 2) * 75 + 34
                b.append(f'<path d="M{x1} 92 C{x1} 160 {x2} 150 {x2} 218" stroke="{cols[g]}" stroke-opacity="0.45" fill="none"/>')
    b.append(txt(20, 290, 'Dispatch: each token goes to the GPUs that hold its two chosen experts. Combine: results come back to', 's'))
    b.append(txt(20, 307, 'the token\u2019s own GPU, weighted by the router\u2019s scores. Both steps are all-to-all collectives.', 's'))
    return svg(W, H, '\n'.join(b), 'Token routing in an expert-parallel mixture-of-experts layer',
               'Four GPUs each hold six tokens and two experts. Curves show every token sent to two experts, '
               'mostly on other GPUs, which is the all-to-all dispatch; results return by a second all-to-all.')


# Figure 10: roofline
def fig_roofline():
    W, H = 760, 420
    x0, y0, pw, ph = 80, 40, 620, 320
    lx = lambda v: x0 + (math.log10(v) - (-1)) / (4 - (-1)) * pw   # 0.1 .. 10^4 FLOP/byte
    ly = lambda v: y0 + ph - (math.log10(v) + 1) / (4 + 1) * ph     # 0.1 .. 10^4 TFLOP/s
    b = [txt(20, 26, 'Roofline of an H100 SXM (bf16 dense, 989 TFLOP/s; HBM3, 3.35 TB/s)', 't')]
    for d in range(-1, 5):
        x = lx(10 ** d)
        b.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + ph}" class="grid"/>')
        b.append(txt(x, y0 + ph + 18, f'{10 ** d:g}', 'xs', 'middle'))
    for d in range(-1, 5):
        y = ly(10 ** d)
        b.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + pw}" y2="{y:.1f}" class="grid"/>')
        b.append(txt(x0 - 8, y + 4, f'{10 ** d:g}', 'xs', 'end'))
    b.append(txt(x0 + pw / 2, y0 + ph + 40, 'arithmetic intensity (FLOP per byte moved from HBM)', 's', 'middle'))
    b.append(txt(22, y0 + ph / 2, 'TFLOP/s', 's', 'middle', f' transform="rotate(-90 22 {y0 + ph / 2})"'))
    peak, bw = 989, 3.35
    ridge = peak / bw
    pts = [(0.1, 0.1 * bw), (ridge, peak), (1e4, peak)]
    d = ' '.join(f'{"M" if i == 0 else "L"}{lx(a):.1f} {ly(max(v, 1)):.1f}' for i, (a, v) in enumerate(pts))
    b.append(f'<path d="M{lx(0.1):.1f} {ly(0.1 * bw):.1f} L{lx(ridge):.1f} {ly(peak):.1f} L{lx(1e4):.1f} {ly(peak):.1f}" stroke="#e45756" stroke-width="3" fill="none"/>')
    b.append(txt(lx(ridge) - 8, ly(peak) - 8, f'ridge ≈ {ridge:.0f} FLOP/B', 's b', 'end'))
    # (name, FLOP per HBM byte, label offset, anchor, share of the roof attained). FlashAttention's forward
    # pass reads Q, K and V and writes O about once from HBM (the re-reads of K and V mostly hit L2), so
    # its intensity is in the hundreds to thousands, right of the ridge; FlashAttention-3 attains about
    # 75% of the H100's bf16 peak there (section 13).
    kernels = [('elementwise add (bf16)', 1 / 6, 9, -8, 'start', 0.8), ('LayerNorm / softmax', 1.5, 9, -8, 'start', 0.8),
               ('attention, unfused (d_head 128)', 64, 9, 18, 'start', 0.8), ('FlashAttention fwd', 700, 0, 22, 'middle', 0.75),
               ('GEMM 8192³', 2730, 9, 22, 'start', 0.8), ('GEMM 4096×4096×128', 120, -9, -10, 'end', 0.8)]
    for (name, ai, dx, dy, anchor, share) in kernels:
        att = min(peak, ai * bw)
        x, y = lx(ai), ly(att * share)            # a share of what the roof allows: always below it
        b.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="6" fill="#4c78a8"/>')
        b.append(txt(x + dx, y + dy, name, 'xs', anchor))
    return svg(W, H, '\n'.join(b), 'Roofline model of an H100 GPU with typical training kernels',
               'Log-log plot of achievable TFLOP/s against arithmetic intensity. A memory-bound slope of 3.35 TB/s '
               'meets the compute roof of 989 TFLOP/s at about 295 FLOP per byte. Element-wise operations, '
               'normalisation and naive attention sit on the slope; large matrix multiplications and FlashAttention\u2019s '
               'forward pass, at about 700 FLOP per byte, sit right of the ridge just under the roof, at 80 and 75 percent of peak.')


# Figure 11: FlashAttention tiling
def fig_flash():
    W, H = 760, 342
    b = [txt(20, 28, 'FlashAttention: stream K,V tiles through SRAM, never store s×s scores', 't')]
    # Q, K^T, V blocks
    b.append(txt(40, 60, 'Q (s × d_head)', 's b'))
    for i in range(6):
        col = C['act'] if i == 2 else '#9aa1ad'
        b.append(rect(40, 70 + i * 30, 60, 27, col, ' rx="2"'))
    b.append(txt(165, 60, 'Kᵀ (d_head × s)', 's b'))
    for j in range(6):
        col = C['param'] if j == 3 else '#9aa1ad'
        b.append(rect(165 + j * 30, 70, 27, 60, col, ' rx="2"'))
    b.append(txt(165, 160, 'S = QKᵀ tile (only in SRAM)', 's b'))
    for i in range(6):
        for j in range(6):
            col = C['gold'] if (i == 2 and j == 3) else ('#d5d8de' if j <= 3 and i == 2 else 'none')
            b.append(rect(165 + j * 30, 172 + i * 19, 27, 16, col, ' class="box"' if col == 'none' else ' rx="1"'))
    b.append(rect(390, 70, 340, 200, 'none', ' class="box" rx="10"'))
    b.append(txt(405, 95, 'For each query tile Qᵢ (one thread block):', 's b'))
    lines = ['load Qᵢ into SRAM; m = −∞, ℓ = 0, O = 0', 'for each key tile j:', '   load Kⱼ, Vⱼ into SRAM',
             '   S = Qᵢ Kⱼᵀ / √d_head   (in SRAM)', '   m′ = max(m, rowmax S)', '   P = exp(S − m′)',
             '   ℓ = e^(m−m′) ℓ + rowsum P', '   O = e^(m−m′) O + P Vⱼ ;  m = m′', 'write Oᵢ / ℓ and log-sum-exp to HBM']
    for k, l in enumerate(lines):
        b.append(txt(405, 118 + k * 17, l, 'xs m', extra=' style="white-space:pre"'))
    b.append(txt(20, 310, 'HBM traffic per head drops from Θ(s·d_head + s²) to Θ(s²·d_head²/M) for SRAM size M.', 's'))
    b.append(txt(20, 328, 'The backward pass recomputes S from Q, K and the saved per-row statistics.', 's'))
    return svg(W, H, '\n'.join(b), 'Tiling scheme of FlashAttention',
               'A query tile and a key tile are loaded into on-chip memory, their score tile is computed and '
               'consumed immediately with an online softmax that keeps a running maximum and sum, and only the '
               'output tile is written back to high-bandwidth memory.')


# Figure 12: activation recomputation timeline
def fig_recompute():
    W, H = 760, 260
    b = [txt(20, 28, 'Activation memory over one step of a 6-layer model', 't')]
    x0, y0, pw, ph = 70, 50, 640, 150
    b.append(f'<line x1="{x0}" y1="{y0 + ph}" x2="{x0 + pw}" y2="{y0 + ph}" class="ln"/>')
    b.append(f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y0 + ph}" class="ln"/>')
    L = 6
    # no recompute: grows linearly to L*34 units in forward then shrinks in backward
    def path(vals, col, dash=''):
        n = len(vals) - 1
        pts = ' '.join(f'{"M" if i == 0 else "L"}{x0 + i * pw / n:.1f} {y0 + ph - v * ph:.1f}' for i, v in enumerate(vals))
        return f'<path d="{pts}" stroke="{col}" stroke-width="3" fill="none"{dash}/>'
    full = [i / L for i in range(L + 1)] + [(L - i) / L for i in range(1, L + 1)]
    ckpt = [i * 0.03 for i in range(L + 1)] + [0.18 - 0.03 * i + 0.16 for i in range(1, L + 1)]
    ckpt[-1] = 0
    b.append(path(full, C['act']))
    b.append(path(ckpt, C['param'], ' stroke-dasharray="7 4"'))
    b.append(txt(x0 + pw * 0.25, y0 + ph + 20, 'forward', 's', 'middle'))
    b.append(txt(x0 + pw * 0.75, y0 + ph + 20, 'backward', 's', 'middle'))
    b.append(f'<line x1="{x0 + pw / 2}" y1="{y0}" x2="{x0 + pw / 2}" y2="{y0 + ph}" class="grid" stroke-dasharray="3 3"/>')
    b.append(txt(x0 - 8, y0 + 8, 'peak', 'xs', 'end'))
    b.append(rect(90, 228, 14, 4, C['act']))
    b.append(txt(110, 234, 'store every activation', 's'))
    b.append(rect(300, 228, 14, 4, C['param']))
    b.append(txt(320, 234, 'store layer inputs only, recompute one layer at a time in backward', 's'))
    return svg(W, H, '\n'.join(b), 'Activation memory with and without full recomputation',
               'Without recomputation, activation memory rises through the forward pass to a peak of all layers and '
               'falls during the backward pass. With full recomputation only each layer\u2019s input is kept, so the '
               'curve stays low and gains only one layer\u2019s worth of activations while that layer is recomputed.')


# ---------------------------------------------------------------------------------------------
# A deliberately small cost model for 3D/4D parallel training of a dense transformer. Its memory
# model and the pricing of each collective are the parallelism explorer's
# (fragments/parallelism-explorer.html); only the compute efficiency and the overlap factors are
# the sweep's own round guesses.
MODELS = {
    '8B': dict(P=8e9, L=32, h=4096, a=32, kv=8, ffn=14336),
    '70B': dict(P=70e9, L=80, h=8192, a=64, kv=8, ffn=28672),
}
NODE = 8


def layer_coef(m):
    """Llama layer (SwiGLU, no dropout, GQA), bytes per s*b*h with fused attention:
    12 (2 RMSNorm inputs and outputs, Q, attention output) + 4 h_kv/h (K, V) + 6 f/h (SwiGLU)."""
    hkv = m['kv'] * m['h'] // m['a']
    return 12 + 4 * hkv / m['h'] + 6 * m['ffn'] / m['h']


def memory(m, tp, pp, cp, mb, zero, recompute, dp, micro, seq):
    """Bytes per GPU: model states with ZeRO over n = dp*cp, activations of the first 1F1B stage."""
    n = dp * cp
    shard = m['P'] / (tp * pp)
    states = 2 * shard / (n if zero >= 3 else 1) + 2 * shard / (n if zero >= 2 else 1) + 12 * shard / (n if zero >= 1 else 1)
    s = seq // cp
    sbh = s * mb * m['h']
    sel = layer_coef(m) * sbh / tp
    # without a fused kernel the softmax output of the local queries against all seq keys is kept
    per_layer = {'none': sel + 2 * m['a'] * s * seq * mb / tp, 'selective': sel, 'full': 2 * sbh / tp}[recompute]
    inflight = min(pp, micro) if pp > 1 else 1
    act = per_layer * (m['L'] // pp) * inflight + (sel if recompute == 'full' else 0)
    return states + act


def toy_step(model, N, tp, pp, cp, mb, zero, recompute, seq=8192, gbs_tokens=16 * 2 ** 20,
             peak=989e12, nvlink=450e9, ib=50e9, hbm=80e9):
    """Memory per GPU and step time for one layout. The efficiency curve and overlap factors are round guesses."""
    m = MODELS[model]
    P, L, h, a = m['P'], m['L'], m['h'], m['a']
    dp = N // (tp * pp * cp)
    if dp < 1 or dp * tp * pp * cp != N or L % pp or m['kv'] % min(tp, m['kv']):
        return None
    if pp > 1 and zero > 1:          # left out, as the article says: every micro-batch would pay the
        return None                  # reduce-scatter or gathers again (DeepSpeed's pipelines refuse it)
    seqs = gbs_tokens // seq
    if seqs % (dp * mb):
        return None
    micro = seqs // (dp * mb)          # micro-batches per pipeline per step
    if pp > 1 and micro < pp:          # left out too: (p-1)/(m+p-1) >= 1/2, half of every step idle
        return None
    n = dp * cp                        # context-parallel ranks hold the same weights, so they join the
    shard = P / (tp * pp)              # gradient reduction and the optimizer sharding
    mem = memory(m, tp, pp, cp, mb, zero, recompute, dp, micro, seq)
    s = seq // cp
    model_flops = (6 * P + 6 * L * h * seq) * gbs_tokens          # dense + causal attention
    extra = {'none': 0, 'selective': 2 * L * h * seq, 'full': 2 * P + 2 * L * h * seq}[recompute] * gbs_tokens
    tok, hh = mb * s, h / tp
    eff = 0.7 * tok / (tok + 1536) * hh / (hh + 384)   # small GEMMs run further from peak
    t_comp = (model_flops + extra) / (N * peak * eff)
    bubble = (pp - 1) / (micro + pp - 1) if pp > 1 else 0.0
    t_pipe = t_comp / (1 - bubble)
    layers = L // pp
    # links as in the explorer: ranks numbered as Megatron-LM does by default, TP fastest, then CP,
    # DP, PP (rank = tp + t*(cp + c*(dp + d*pp))), 8 GPUs a node
    bw_tp = nvlink if tp <= NODE else ib
    bw_cp = nvlink if tp * cp <= NODE else ib
    bw_pp = nvlink if N <= NODE else ib
    bw_dp = nvlink if tp * cp * dp <= NODE else ib
    n_ar = 6 if recompute == 'full' else 4
    t_tp = 0 if tp == 1 else n_ar * 2 * (tp - 1) / tp * (mb * s * h * 2) * layers * micro / bw_tp * 0.6
    kvdim = m['kv'] * h // a
    t_cp = 0 if cp == 1 else (cp - 1) * 3 * 2 * s * mb * (kvdim / tp) * 2 * layers * micro / bw_cp * 0.15
    t_p2p = 0 if pp == 1 else 2 * mb * s * h * 2 * micro / (tp * bw_pp)
    # one reduce-scatter or all-gather; across nodes hierarchical, with k members of the group per node
    k = sum(1 for q in range(min(N, NODE)) if q % tp == 0 and q // (tp * cp * dp) == 0)
    if n == 1:
        one = 0
    elif bw_dp == nvlink or k == 1:
        one = (n - 1) / n * 2 * shard / bw_dp
    else:
        one = max((k - 1) / k * 2 * shard / nvlink, (n / k - 1) / (n / k) * 2 * shard / k / ib)   # pipelined
    if zero <= 1:
        t_dp = 0.3 * 2 * one
    elif zero == 2:
        t_dp = 0.3 * (micro + 1) * one
    else:
        c = 3 * micro * one
        t_dp = max(0.1 * c, c - 0.8 * t_comp)
    t = t_pipe + t_tp + t_cp + t_p2p + t_dp
    mfu = model_flops / (t * N * peak)
    return dict(model=model, N=N, dp=dp, tp=tp, pp=pp, cp=cp, mb=mb, zero=zero, recompute=recompute,
                mem_gb=round(mem / 1e9, 2), fits=mem <= hbm * 0.9, step_s=round(t, 3), mfu=round(mfu, 4),
                tok_s_gpu=round(gbs_tokens / t / N), bubble=round(bubble, 4))


SWEEP_NS = (64, 128, 256, 512, 1024)


def sweep(models=('70B',), Ns=SWEEP_NS):
    out = []
    for model in models:
        for N in Ns:
            for tp in (1, 2, 4, 8):
                for pp in (1, 2, 4, 8, 16):
                    for cp in (1, 2, 4, 8):
                        for mb in (1, 2, 4):
                            for zero in (0, 1, 2, 3):
                                for rc in ('none', 'selective', 'full'):
                                    r = toy_step(model, N, tp, pp, cp, mb, zero, rc)
                                    if r:
                                        out.append(r)
    return out


# Okabe-Ito colours (safe for the common colour-vision deficiencies). Layouts that do not fit are
# drawn as rings rather than faded, so they stay visible on a dark page.
TP_COL = {1: '#E69F00', 2: '#56B4E9', 4: '#009E73', 8: '#CC79A7'}


def scatter_svg(rows, W, H, title, desc, tooltips, fragment=False, fs=13):
    """Scatter of MFU against memory. fs is the tick-label size in user units; the rest scales from it."""
    def t(x, y, s, size, anchor='start', extra='', cls=''):
        c = f' class="{cls}"' if cls else ''
        a = '' if anchor == 'start' else f' text-anchor="{anchor}"'
        return f'<text x="{x:g}" y="{y:g}"{c}{a} style="font-size:{size:g}px"{extra}>{esc(s)}</text>'
    top = (0 if fragment else fs * 2.4) + fs * 2.6            # title, then the legend row
    x0, y0 = fs * 5.2, top + fs * 0.8
    pw, ph = W - x0 - fs * 1.6, H - y0 - fs * 4.4
    xmax = 200
    ymax = max(r['mfu'] for r in rows) * 1.08
    X = lambda v: x0 + min(v, xmax) / xmax * pw
    Y = lambda v: y0 + ph - v / ymax * ph
    b = []
    if not fragment:
        b.append(t(fs, fs * 1.8, title, fs * 1.15, extra=' font-weight="650"'))
    lx = x0
    ly = top - fs * 0.9
    for tpv, col in TP_COL.items():
        b.append(f'<circle cx="{lx + fs * 0.45:.1f}" cy="{ly - fs * 0.35:.1f}" r="{fs * 0.4:.1f}" fill="{col}"/>')
        b.append(t(lx + fs * 1.2, ly, f'TP = {tpv}', fs))
        lx += fs * 5.6
    b.append(f'<circle cx="{lx + fs * 0.45:.1f}" cy="{ly - fs * 0.35:.1f}" r="{fs * 0.35:.1f}" fill="none" stroke="#888" stroke-width="1.5"/>')
    b.append(t(lx + fs * 1.2, ly, 'ring: does not fit', fs, cls='mute'))
    for gx in range(0, xmax + 1, 20 if W / fs > 60 else 40):
        b.append(f'<line x1="{X(gx):.1f}" y1="{y0:.1f}" x2="{X(gx):.1f}" y2="{y0 + ph:.1f}" class="grid"/>')
        b.append(t(X(gx), y0 + ph + fs * 1.3, str(gx), fs, 'middle'))
    for k in range(0, 8):
        v = k * 0.1
        if v > ymax:
            break
        b.append(f'<line x1="{x0:.1f}" y1="{Y(v):.1f}" x2="{x0 + pw:.1f}" y2="{Y(v):.1f}" class="grid"/>')
        b.append(t(x0 - fs * 0.5, Y(v) + fs * 0.35, f'{v * 100:.0f}%', fs, 'end'))
    hx = X(80 * 0.9)
    b.append(f'<line x1="{hx:.1f}" y1="{y0:.1f}" x2="{hx:.1f}" y2="{y0 + ph:.1f}" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4"/>')
    b.append(t(hx + fs * 0.4, y0 + fs * 1.2, '72 GB: 90% of an 80 GB GPU', fs))
    b.append(t(x0 + pw / 2, y0 + ph + fs * 3.1, 'memory per GPU (GB, clipped at 200)', fs * 1.08, 'middle'))
    b.append(t(fs * 1.3, y0 + ph / 2, 'model FLOPs utilisation', fs * 1.08, 'middle',
               f' transform="rotate(-90 {fs * 1.3:g} {y0 + ph / 2:.1f})"'))
    r_dot = fs * 0.21
    groups = {}
    for r in rows:
        groups.setdefault((r['fits'], r['tp']), []).append(r)
    pts = []
    for (fits, tpv) in sorted(groups):                    # rings first, filled dots on top
        col = TP_COL[tpv]
        paint = f'fill="{col}" fill-opacity="0.8"' if fits else f'fill="none" stroke="{col}" stroke-width="1"'
        fit_attr = f' data-fit="{1 if fits else 0}"' if tooltips else ''
        pts.append(f'<g {paint}{fit_attr}>')
        for r in groups[(fits, tpv)]:
            cx, cy = X(r['mem_gb']), Y(r['mfu'])
            if tooltips:
                data = (f"{r['N']} {r['dp']} {r['tp']} {r['pp']} {r['cp']} {r['mb']} {r['zero']} {r['recompute'][0]} "
                        f"{r['mem_gb']} {r['mfu'] * 100:.1f}")
                pts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r_dot:.1f}" data-c="{data}"/>')
            else:
                pts.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r_dot:.1f}"/>')
        pts.append('</g>')
    b.append('<g class="sweep-dots">' + '\n'.join(pts) + '</g>')
    if tooltips:
        b.append(f'<circle class="sweep-mark" cx="-20" cy="-20" r="{fs * 0.6:.1f}" fill="none" stroke="currentColor" stroke-width="2" pointer-events="none"/>')
    body = '\n'.join(b)
    if fragment:
        return (f'<svg class="sweep-chart" viewBox="0 0 {W} {H}" role="img" aria-labelledby="sweep-title sweep-desc">'
                f'<title id="sweep-title">{esc(title)}</title><desc id="sweep-desc">{esc(desc)}</desc>\n{body}\n</svg>')
    return svg(W, H, body, title, desc)


SWEEP_SCRIPT = r'''<script>
(function () {
  'use strict';
  var host = document.getElementById('fragment-config-sweep');
  if (!host) return;
  var root = host.querySelector('.sweep');
  if (!root || root.getAttribute('data-bound') === '1') return;
  root.setAttribute('data-bound', '1');
  var chart = root.querySelector('.sweep-chart');
  var dots = root.querySelectorAll('.sweep-dots circle');
  var mark = root.querySelector('.sweep-mark'), readout = root.querySelector('.sweep-readout');
  var gpus = root.querySelector('#sweep-gpus'), fit = root.querySelector('#sweep-fit');
  // On a narrow screen the chart keeps a readable size and its wrapper scrolls sideways instead.
  root.querySelector('.sweep-inner').style.minWidth = '560px';
  readout.style.cssText = 'font-family:var(--sans);font-size:0.9rem;min-height:2.8em;margin:0.4rem 0';
  var RC = { n: 'none', s: 'selective', f: 'full' };
  function apply() {
    var shown = 0;
    for (var i = 0; i < dots.length; i++) {
      var d = dots[i], n = 'n' + d.getAttribute('data-c').split(' ')[0], fits = d.parentNode.getAttribute('data-fit') === '1';
      var on = (gpus.value === 'all' || gpus.value === n) && (!fit.checked || fits);
      dots[i].style.display = on ? '' : 'none';
      if (on) shown++;
    }
    root.querySelector('.sweep-count').textContent = shown.toLocaleString('en') + ' of ' + dots.length.toLocaleString('en') + ' configurations shown.';
  }
  // Hover (mouse) or tap (touch, pen): the nearest shown dot within reach is described below the chart.
  function pick(e) {
    var ctm = chart.getScreenCTM();
    if (!ctm) return;
    var pt = chart.createSVGPoint();
    pt.x = e.clientX; pt.y = e.clientY;
    var q = pt.matrixTransform(ctm.inverse()), reach = (e.pointerType === 'mouse' ? 12 : 28) / ctm.a;
    var best = null, bd = reach * reach;
    for (var i = 0; i < dots.length; i++) {
      if (dots[i].style.display === 'none') continue;
      var dx = dots[i].cx.baseVal.value - q.x, dy = dots[i].cy.baseVal.value - q.y, d = dx * dx + dy * dy;
      if (d < bd) { bd = d; best = dots[i]; }
    }
    if (!best) return;
    var v = best.getAttribute('data-c').split(' ');
    mark.setAttribute('cx', best.getAttribute('cx'));
    mark.setAttribute('cy', best.getAttribute('cy'));
    readout.textContent = v[0] + ' GPUs: DP ' + v[1] + ' \u00d7 TP ' + v[2] + ' \u00d7 PP ' + v[3] + ' \u00d7 CP ' + v[4] + ', micro-batch ' + v[5] +
      ', ZeRO-' + v[6] + ', recompute ' + RC[v[7]] + ': ' + v[8] + ' GB per GPU' + (best.parentNode.getAttribute('data-fit') === '1' ? '' : ' (does not fit)') + ', MFU ' + v[9] + '%.';
    root.setAttribute('data-picked', best.getAttribute('data-c'));
  }
  chart.addEventListener('pointermove', function (e) { if (e.pointerType === 'mouse') pick(e); });
  chart.addEventListener('pointerdown', pick);
  gpus.addEventListener('change', apply);
  fit.addEventListener('change', apply);
  apply();
})();
</script>
'''


def fragment_sweep(rows):
    ns = sorted({r['N'] for r in rows})
    span = f'{ns[0]:,} to {ns[-1]:,}'
    chart = scatter_svg(rows, 640, 470, 'Every configuration of the toy cost model for a 70B model',
                        'Scatter plot of model FLOPs utilisation against memory per GPU for the combinations of '
                        f'data, tensor, pipeline and context parallel degree, micro-batch size, ZeRO stage and '
                        f'recomputation policy on {span} GPUs, except pipelines with ZeRO-2 or 3 and pipelines with '
                        f'fewer micro-batches than stages. Configurations right of the 72 GB line do not fit.',
                        tooltips=True, fragment=True)
    fit = [r for r in rows if r['fits']]
    best = sorted(fit, key=lambda r: (-r['mfu'], r['N'], r['mem_gb']))[:12]
    trs = '\n'.join(
        f'<tr><td>{r["N"]:,}</td><td>{r["dp"]}</td><td>{r["tp"]}</td><td>{r["pp"]}</td><td>{r["cp"]}</td><td>{r["mb"]}</td>'
        f'<td>{r["zero"]}</td><td>{r["recompute"]}</td><td>{r["mem_gb"]:.1f}</td><td>{r["mfu"] * 100:.1f}%</td></tr>' for r in best)
    options = ''.join(f'<option value="n{n}">{n:,} GPUs</option>' for n in ns)
    return f'''<div class="sweep">
<p class="fragment-lede">Each of the {len(rows):,} dots below is one way to lay out a 70-billion-parameter model on {span} GPUs
({', '.join(f'{n:,}' for n in ns)}; sequence length 8,192, 16 M tokens per step), scored by the small cost model in
<code>tests/article/gen_assets.py</code>; pipelines with ZeRO-2 or 3, and pipelines with fewer micro-batches than stages, are left out, for the reasons the text above gives. {len(fit):,} of them fit in 72 GB, 90 percent of an 80 GB GPU. Hover over a dot, or tap it, to read its configuration.
Memory is counted exactly as in the parallelism explorer. The time is a sketch made for this article, not a benchmark: it knows about FLOPs, the pipeline bubble, the size of each
collective and two link speeds, and nothing about kernels, congestion or stragglers.</p>
<div class="widget-controls sweep-controls">
<div><label for="sweep-gpus">Cluster size</label>
<select id="sweep-gpus"><option value="all" selected>all sizes</option>{options}</select></div>
<div><span class="control-label">Filter</span><label class="check"><input id="sweep-fit" type="checkbox"> only configurations that fit</label></div>
<p class="sweep-count" aria-live="polite"></p>
</div>
<div class="sweep-figure" id="fig-config-sweep">
<div class="table-wrap sweep-scroll" tabindex="0">
<div class="sweep-inner">
{chart}
</div>
</div>
<p class="sweep-readout" aria-live="polite">Hover over or tap a dot: its configuration appears here.</p>
</div>
<div class="table-wrap" tabindex="0">
<table class="data-table">
<caption>The twelve best configurations that fit, according to the toy model</caption>
<thead><tr><th scope="col">GPUs</th><th scope="col">DP</th><th scope="col">TP</th><th scope="col">PP</th><th scope="col">CP</th><th scope="col">micro-batch</th><th scope="col">ZeRO</th><th scope="col">recompute</th><th scope="col">GB/GPU</th><th scope="col">MFU</th></tr></thead>
<tbody>
{trs}
</tbody>
</table>
</div>
</div>
{SWEEP_SCRIPT}'''

# ---------------------------------------------------------------------------------------------
# PNG writer (RGB, 8-bit) and raster figures
def png(w, h, pixel):
    raw = bytearray()
    for y in range(h):
        raw.append(0)
        for x in range(w):
            raw.extend(pixel(x, y))
    def chunk(t, d):
        c = struct.pack('>I', len(d)) + t + d
        return c + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) +
            chunk(b'IDAT', zlib.compress(bytes(raw), 9)) + chunk(b'IEND', b''))


def hexrgb(s):
    return tuple(int(s[i:i + 2], 16) for i in (1, 3, 5))


def lerp(c1, c2, t):
    return tuple(int(a + (b - a) * t) for a, b in zip(c1, c2))


def viridisish(t):
    stops = [hexrgb('#440154'), hexrgb('#3b528b'), hexrgb('#21918c'), hexrgb('#5ec962'), hexrgb('#fde725')]
    t = max(0.0, min(1.0, t)) * (len(stops) - 1)
    i = min(int(t), len(stops) - 2)
    return lerp(stops[i], stops[i + 1], t - i)


def png_causal_zigzag(dark=False):
    """Causal attention mask of 16 chunks, coloured by which of 4 GPUs computes it (zig-zag split).
    The dark variant (shown when the reader prefers a dark scheme) draws its grid lines and masked
    blocks in the dark page's colours instead of white and light grey."""
    n, cpx, c = 16, 20, 4
    cols = [hexrgb(x) for x in ('#4c78a8', '#f58518', '#54a24b', '#e45756')]
    owner = {}
    for g in range(c):
        for k in (g, 2 * c - 1 - g):
            for j in (2 * k, 2 * k + 1):
                owner[j] = g
    def px(x, y):
        i, j = y // cpx, x // cpx
        paper = (21, 24, 29) if dark else (255, 255, 255)           # the page's --bg
        if x % cpx == 0 or y % cpx == 0:
            return paper
        if j > i:
            return (38, 43, 52) if dark else (236, 238, 241)
        base = cols[owner[i]]
        return lerp(base, paper, 0.15 if j < i else 0.0)
    return png(n * cpx + 1, n * cpx + 1, px)


def png_bubble_heatmap():
    """Bubble fraction (p-1)/(m+p-1) for p = 1..32 (x) and m = 1..64 (y)."""
    P, M, s = 32, 64, 8
    def px(x, y):
        p = x // s + 1
        m = M - y // (s // 2)
        if m < 1:
            m = 1
        f = (p - 1) / (m + p - 1)
        return viridisish(1 - f)
    return png(P * s, M * (s // 2), px)


def png_hero():
    """A cluster seen from above: 32 nodes x 8 GPUs, coloured by their DP/PP/TP coordinates."""
    W, H = 960, 240
    rnd = random.Random(3)
    cols = [hexrgb(x) for x in ('#4c78a8', '#72b7b2', '#54a24b', '#eeca3b', '#f58518', '#e45756', '#b279a2', '#ff9da6')]
    cells = {}
    def px(x, y):
        gx, gy = x // 30, y // 30
        lx, ly = x % 30, y % 30
        if lx < 3 or ly < 3:
            return (24, 28, 36)
        key = (gx, gy)
        if key not in cells:
            stage = gx // 4
            shade = 0.12 * ((gy + gx) % 4)
            cells[key] = lerp(cols[stage % 8], (18, 22, 30), shade + rnd.random() * 0.08)
        c = cells[key]
        glow = max(0.0, 1 - (abs(lx - 16) + abs(ly - 16)) / 26)
        return lerp(c, (255, 255, 255), glow * 0.25)
    return png(W, H, px)


def fig_bubble_heatmap():
    """Figure 12: the bubble fraction (p-1)/(m+p-1) as a grid of cells, with axes and a colour scale."""
    import base64
    P, M = 32, 64
    W, H = 400, 376                              # shown about 350 px wide beside the text
    x0, y0, pw, ph = 56, 48, 256, 256            # 8 px per stage, 4 px per micro-batch
    cw, ch = pw / P, ph / M
    b = [txt(16, 28, 'Pipeline bubble (p−1)/(m+p−1)', 't')]
    # The cells as one embedded bitmap (the same pixels as bubble-heatmap.png), drawn unsmoothed.
    data = base64.b64encode(png_bubble_heatmap()).decode()
    b.append(f'<image x="{x0}" y="{y0}" width="{pw}" height="{ph}" preserveAspectRatio="none" style="image-rendering:pixelated" '
             f'href="data:image/png;base64,{data}"/>')
    b.append(f'<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" class="ln"/>')
    for p_ in (1, 8, 16, 24, 32):
        x = x0 + (p_ - 0.5) * cw
        b.append(f'<line x1="{x:.1f}" y1="{y0 + ph}" x2="{x:.1f}" y2="{y0 + ph + 5}" class="ln"/>')
        b.append(txt(round(x, 1), y0 + ph + 19, str(p_), 's', 'middle'))
    for m_ in (1, 16, 32, 48, 64):
        y = y0 + ph - (m_ - 0.5) * ch
        b.append(f'<line x1="{x0 - 5}" y1="{y:.1f}" x2="{x0}" y2="{y:.1f}" class="ln"/>')
        b.append(txt(x0 - 9, round(y + 4, 1), str(m_), 's', 'end'))
    b.append(txt(x0 + pw / 2, y0 + ph + 42, 'pipeline stages p', 's b', 'middle'))
    b.append(txt(18, y0 + ph / 2, 'micro-batches m', 's b', 'middle', f' transform="rotate(-90 18 {y0 + ph / 2})"'))
    # colour scale: bright = small bubble
    gx, gw = x0 + pw + 26, 16
    stops = ''.join(f'<stop offset="{k / 10:.1f}" stop-color="#{"%02x%02x%02x" % viridisish(1 - k / 10)}"/>' for k in range(11))
    b.append(f'<rect x="{gx}" y="{y0}" width="{gw}" height="{ph}" fill="url(#bubble-scale)" stroke="#6b7280"/>')
    for f in (0, 0.25, 0.5, 0.75, 1.0):
        y = y0 + f * ph
        b.append(f'<line x1="{gx + gw}" y1="{y:.1f}" x2="{gx + gw + 5}" y2="{y:.1f}" class="ln"/>')
        b.append(txt(gx + gw + 9, round(y + 4, 1), f'{f * 100:.0f}%', 's'))
    b.append(txt(gx + gw / 2, y0 - 10, 'bubble', 's b', 'middle'))
    return svg(W, H, '\n'.join(b), 'Pipeline bubble fraction for 1 to 32 stages and 1 to 64 micro-batches',
               'A heat map with pipeline stages p from 1 to 32 along the horizontal axis and micro-batches m from 1 to 64 up '
               'the vertical axis. Each cell is coloured by the bubble fraction (p-1)/(m+p-1) on a scale from 0 percent '
               '(bright yellow) to 100 percent (dark purple). The bottom-right corner, few micro-batches and many stages, is '
               'dark; the bubble is small only where m is several times p.',
               extra_defs=f'<linearGradient id="bubble-scale" x1="0" y1="0" x2="0" y2="1">{stops}</linearGradient>')


# ---------------------------------------------------------------------------------------------
def main():
    random.seed(1)
    figs = {
        'assets/figures/memory-breakdown.svg': fig_memory_breakdown(),
        'assets/figures/number-formats.svg': fig_formats(),
        'assets/figures/ring-allreduce.svg': fig_ring_allreduce(),
        'assets/figures/zero-stages.svg': fig_zero(),
        'assets/figures/tensor-parallel-mlp.svg': fig_tp_mlp(),
        'assets/figures/sequence-parallel.svg': fig_sp(),
        'assets/figures/ring-attention.svg': fig_ring_attention(),
        'assets/figures/pipeline-schedules.svg': fig_pipeline(),
        'assets/figures/moe-all-to-all.svg': fig_moe(),
        'assets/figures/roofline.svg': fig_roofline(),
        'assets/figures/flash-attention.svg': fig_flash(),
        'assets/figures/recomputation.svg': fig_recompute(),
        'assets/figures/bubble-heatmap.svg': fig_bubble_heatmap(),
    }
    for p, s in figs.items():
        write(p, s)

    rows = sweep()
    write('fragments/config-sweep.html', fragment_sweep(rows))
    keys = ['model', 'N', 'dp', 'tp', 'pp', 'cp', 'mb', 'zero', 'recompute', 'mem_gb', 'fits', 'step_s', 'mfu', 'tok_s_gpu', 'bubble']
    csv = ','.join(keys) + '\n' + '\n'.join(','.join(str(r[k]).lower() if isinstance(r[k], bool) else str(r[k]) for k in keys) for r in rows) + '\n'
    write('assets/data/sweep-70b.csv', csv)
    big = sweep(models=('8B', '70B'), Ns=(8, 32, 128, 512, 2048))
    write('assets/images/sweep-dense.svg', scatter_svg(
        big, 1200, 760, f'{len(big):,} configurations of the toy cost model (8B and 70B models, 8 to 2048 GPUs)',
        'Dense scatter plot of model FLOPs utilisation against memory per GPU for every valid configuration of '
        'the article\u2019s toy cost model for an 8B and a 70B model.', tooltips=False, fs=22))

    gpus = {
        'note': 'Published peak dense throughput and memory bandwidth of a few data-centre GPUs, rounded.',
        'gpus': [
            {'name': 'V100 SXM2', 'fp16_tflops': 125, 'bf16_tflops': None, 'hbm_tb_s': 0.9, 'hbm_gb': 32},
            {'name': 'A100 SXM 80GB', 'fp16_tflops': 312, 'bf16_tflops': 312, 'hbm_tb_s': 2.04, 'hbm_gb': 80},
            {'name': 'H100 SXM', 'fp16_tflops': 989, 'bf16_tflops': 989, 'hbm_tb_s': 3.35, 'hbm_gb': 80},
            {'name': 'H200 SXM', 'fp16_tflops': 989, 'bf16_tflops': 989, 'hbm_tb_s': 4.8, 'hbm_gb': 141},
            {'name': 'MI300X', 'fp16_tflops': 1307, 'bf16_tflops': 1307, 'hbm_tb_s': 5.3, 'hbm_gb': 192},
        ],
    }
    write('assets/data/gpus.json', json.dumps(gpus, indent=2) + '\n')
    write('assets/images/causal-zigzag.png', png_causal_zigzag(), 'wb')
    write('assets/images/causal-zigzag-dark.png', png_causal_zigzag(dark=True), 'wb')
    write('assets/images/bubble-heatmap.png', png_bubble_heatmap(), 'wb')
    write('assets/images/cluster-hero.png', png_hero(), 'wb')


if __name__ == '__main__':
    main()
