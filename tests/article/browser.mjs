// The article in headless Chromium, served by folio: every fragment is filled, the
// interactive fragments react to input and survive re-injection, a missing fragment shows a
// polite error without retries, the contents track the reader, media and the iframe load,
// every preset puts its worked example into a widget that then shows exactly the text's numbers
// (data-expect spans), bad input is refused visibly, the sweep's memory is the explorer's, a tap
// reads a sweep dot on a phone, and nothing logs an error or fails a request. Screenshots go to
// $FOLIO_ARTIFACTS.
import fs from 'node:fs';
import path from 'node:path';
import { startFolio } from '../lib/folio.mjs';
import { launchBrowser } from '../lib/browser.mjs';
import { SOURCE_ROOT, tally, watchdog } from './common.mjs';

const t = tally('article-browser');
const ARTIFACTS = process.env.FOLIO_ARTIFACTS || path.join(SOURCE_ROOT, 'build', 'artifacts');
fs.mkdirSync(ARTIFACTS, { recursive: true });
const shot = (name) => path.join(ARTIFACTS, `article-${name}.png`);

let folio, browser;
const cleanup = async () => { await browser?.close().catch(() => {}); await folio?.stop().catch(() => {}); };
watchdog(230000, cleanup);

const MISSING = '__missing_for_test__';
const INTERACTIVE = {
  'memory-calculator': [
    { label: 'model 70B', chart: '.mc-chart', act: (p) => p.selectOption('#mc-model', '70') },
    { label: 'full recomputation', chart: '.mc-chart', act: (p) => p.selectOption('#mc-recompute', 'full') },
    { label: 'ZeRO-3 over 64 GPUs', chart: '.mc-chart', act: async (p) => { await p.selectOption('#mc-dp', '64'); await p.selectOption('#mc-zero', '3'); } },
  ],
  'parallelism-explorer': [
    { label: 'TP 4', chart: '.pe-chart', act: (p) => p.selectOption('#pe-tp', '4') },
    { label: 'CP 2', chart: '.pe-chart', act: (p) => p.selectOption('#pe-cp', '2') },
  ],
  'pipeline-schedule': [
    { label: 'GPipe', chart: '.ps-chart', act: (p) => p.check('#fragment-pipeline-schedule input[value="gpipe"]') },
    { label: '16 micro-batches', chart: '.ps-chart', act: (p) => setRange(p, '#ps-micro', 16) },
  ],
  'config-sweep': [
    { label: 'only fitting configurations', chart: '.sweep-count', act: (p) => p.check('#sweep-fit') },
  ],
};

async function setRange(page, sel, value) {
  await page.$eval(sel, (el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
}

// A number as the text writes it ("1,120", "9.72", "−3") and how many decimals it claims.
function statedNumber(text) {
  const m = text.replace(/[\s\u00a0\u202f,]/g, '').replace(/\u2212/g, '-').match(/-?\d+(\.(\d+))?/);
  return m ? { value: Number(m[0]), decimals: m[2] ? m[2].length : 0 } : null;
}
const roundTo = (v, d) => Math.round(v * 10 ** d) / 10 ** d;
const widgetSel = (w) => `#fragment-${w} [data-widget="${w}"]`;
const widgetValues = (page, w) => page.$eval(widgetSel(w), (e) => JSON.parse(e.getAttribute('data-values') || '{}'));

// Every worked example: the text's preset link (or, for presets the text does not link, the widget's
// own list) puts it into the widget, and every number the text states about it (data-expect spans)
// is what the widget shows, to the decimals the text writes.
async function checkPresets(page) {
  const links = await page.$$eval('a[data-preset]', (els) => [...new Set(els.map((a) => a.getAttribute('data-preset')))]);
  const expects = await page.$$eval('[data-expect]', (els) => els.map((e) => ({ spec: e.getAttribute('data-expect'), text: e.textContent })));
  const own = await page.$$eval('[data-widget] select.preset-select', (sels) => sels.flatMap((s) =>
    [...s.options].filter((o) => o.value).map((o) => s.closest('[data-widget]').getAttribute('data-widget') + ':' + o.value)));
  t.ok(own.length >= 8, 'the widgets offer their worked examples as presets', own.join(' '));
  const specs = [...new Set([...links, ...own, ...expects.map((e) => e.spec.split(':').slice(0, 2).join(':'))])];
  for (const spec of specs) {
    const [widget, name] = spec.split(':');
    await page.$eval(widgetSel(widget), (e) => e.setAttribute('data-preset', ''));   // so the wait below sees this application
    if (links.includes(spec)) {
      const a = page.locator(`a[data-preset="${spec}"]`).first();
      await a.scrollIntoViewIfNeeded();
      await a.click();
    } else {
      await page.evaluate(([w, n]) => window.folioPresets?.[w]?.(n), [widget, name]);
    }
    const applied = await page.waitForFunction(([sel, n]) => document.querySelector(sel)?.getAttribute('data-preset') === n,
      [widgetSel(widget), name], { timeout: 3000 }).then(() => true, () => false);
    t.ok(applied, `preset ${spec} is applied${links.includes(spec) ? ' by its link in the text' : ''}`);
    if (!applied) continue;
    if (links.includes(spec)) t.ok(await page.evaluate(() => location.hash), `preset link ${spec} sets the address`);
    const v = await widgetValues(page, widget);
    t.ok(!v.error, `preset ${spec} is a valid layout`, JSON.stringify(v));
    for (const e of expects.filter((x) => x.spec.startsWith(spec + ':'))) {
      const key = e.spec.split(':')[2], n = statedNumber(e.text);
      t.ok(n && typeof v[key] === 'number' && Math.abs(roundTo(v[key], n.decimals) - n.value) < 1e-9,
        `the text's ${key} for ${spec} is the widget's`, `text "${e.text.trim()}", widget ${v[key]}`);
    }
  }
  // Hand-computed (python3, see the article-widgets note), so the widgets are checked even where the text says nothing.
  const HAND = {
    'memory-calculator:7b': { act_gb: 104.1530, act_layer_gb: 3.2548, states_gb: 112, bracket: 194 },
    'memory-calculator:7b-flash': { act_gb: 18.2536 },
    'memory-calculator:7b-llama': { act_gb: 51.6066, bracket: 96.125 },
    'memory-calculator:70b-1024': { total_gb: 32.0518 },
    'memory-calculator:70b-z1': { states_gb: 293.125 },
    // Overlap by section 11's rule (hand-computed for issue 22): per micro-batch forward tF and backward tB;
    // ZeRO-1's all-gather max(0, 0.084766 - 0.078036) = 6.73 ms, the pipeline's fill and drain 2(p-1) = 6 sends of 0.3355 ms.
    'parallelism-explorer:70b-1024': { total_gb: 32.0518, compute_s: 7.6693, bubble_s: 0.7190, tp_s: 1.3362, pp_ms: 21.4748, dp_s: 0.1695,
      fwd_mb_s: 0.078036, bwd_mb_s: 0.161631, dp_phase_s: 0.084766, exposed_dp_s: 0.0067297, exposed_pp_s: 0.0020133, exposed_tp_s: 1.336212,
      step_s: 9.733285, step_rule_s: 9.733285, step_serial_s: 9.915548, step_hidden_s: 8.388330, mfu_pct: 38.48368 },
    'parallelism-explorer:70b-131k': { cp_s: 2.4159, exposed_cp_s: 0, exposed_dp_s: 0, step_s: 21.399833 },
    // ZeRO-3 that cannot hide: 405B, TP 8 x PP 2 x DP 1024, two micro-batches of 8,192 tokens. Each gather or reduce-scatter
    // is 1.011511 s against 0.873685 s forward and 1.782390 s backward: 2 x ((1.011511 - 0.873685) + (2.023022 - 1.782390)) = 0.756917 s.
    'parallelism-explorer:405b-16k-zero3': { dp_s: 6.069067, dp_phase_s: 1.011511, fwd_mb_s: 0.873685, bwd_mb_s: 1.782390, exposed_dp_s: 0.7569168,
      exposed_tp_s: 0.526133, exposed_pp_s: 0.0013422, step_s: 9.252618, step_serial_s: 14.566111, step_hidden_s: 7.968226, mfu_pct: 28.32772 },
    // 8B on 512 GPUs, TP 1: 8 members of the DP group per node, each phase 7/8 x 16 GB over NVLink (31.1 ms) and
    // 63/64 x 2 GB over the network (39.4 ms), pipelined, so the slower: 2 x 39.375 ms (issue 34; in sequence 141 ms).
    'parallelism-explorer:8b-512': { dp_s: 0.07875 },
    'pipeline-schedule:p8-m32': { bubble_pct: 17.9487, peak_inflight: 8 },
  };
  for (const [spec, want] of Object.entries(HAND)) {
    const [widget, name] = spec.split(':');
    await page.evaluate(([w, n]) => window.folioPresets[w](n), [widget, name]);
    const v = await widgetValues(page, widget);
    for (const [k, x] of Object.entries(want)) {
      t.ok(Math.abs(v[k] - x) <= 1e-4 * Math.max(1, Math.abs(x)), `${spec} ${k} is the hand-computed ${x}`, `widget ${v[k]}`);
    }
  }
  const near = (a, b) => Math.abs(a - b) <= 1e-4 * Math.max(1, Math.abs(b));
  // Section 11's ZeRO-3 contrast, by the timeline's two presets (no SMs held by communication): at 8,192
  // tokens a layer's 3.821609 ms of forward compute is shorter than its 4.144497 ms gather, so the first
  // gather and 19 x 0.322888 ms show, 10.279363 ms; at 16,384 tokens (8.199088 ms a layer) only the first
  // gather does. With 16 SMs held, the slowed compute outlasts the gather at both sizes and both show
  // 4.144497 x (1 + 19 x 16/132) = 13.689398 ms (hand-computed, python3, issue 34).
  const timeline = async (preset, sms) => page.evaluate(([name, k]) => {
    window.folioOverlapTimeline.apply(name);
    const root = document.querySelector('#fragment-overlap-timeline [data-widget]');
    if (k !== undefined) { const sel = root.querySelector('#ot-sms'); sel.value = k; sel.dispatchEvent(new Event('change', { bubbles: true })); }
    return JSON.parse(root.getAttribute('data-values'));
  }, [preset, sms]);
  const ms3 = (a, b) => Math.abs(a - b) <= 5.001e-4;   // the timeline reports milliseconds to 3 decimals
  const z8 = await timeline('zero3-8192'), z16 = await timeline('zero3-16384');
  t.ok(z8.exposed_ms > z16.exposed_ms + 5 && ms3(z8.exposed_ms, 10.279363) && ms3(z16.exposed_ms, 4.144497) && ms3(z16.exposed_ms, z16.comm_layer_ms),
    'timeline ZeRO-3 presets: 8,192 tokens exposes part of every gather, 16,384 only the first', JSON.stringify([z8.exposed_ms, z16.exposed_ms, z16.comm_layer_ms]));
  const z8s = await timeline('zero3-8192', '16'), z16s = await timeline('zero3-16384', '16');
  t.ok(ms3(z8s.exposed_ms, 13.689398) && ms3(z16s.exposed_ms, 13.689398), 'timeline ZeRO-3 with 16 SMs held: the slowdown hides the contrast at both sizes',
    JSON.stringify([z8s.exposed_ms, z16s.exposed_ms]));
  // The overlap control: its bounds are the rule's neighbours, and collective-matmul TP hides by w/(t-1).
  const mode = async (m) => page.evaluate((m) => {
    const root = document.querySelector('#fragment-parallelism-explorer [data-widget]');
    const sel = root.querySelector('#pe-overlap');
    sel.value = m; sel.dispatchEvent(new Event('change', { bubbles: true }));
    return { v: JSON.parse(root.getAttribute('data-values')), groups: [...root.querySelectorAll('.pe-summary .pe-exposed')].map((e) => e.getAttribute('data-group')),
             step: root.querySelector('.pe-summary .pe-step')?.textContent };
  }, m);
  await page.evaluate(() => window.folioPresets['parallelism-explorer']('70b-1024'));
  let o = await mode('rule');
  t.ok(near(o.v.step_s, 9.733285) && o.step === '9.73 s' && o.groups.join() === 'TP,PP,DP', '70B on 1,024: by the rule TP, the PP fill and drain and the ZeRO-1 gather are exposed', JSON.stringify([o.step, o.groups]));
  o = await mode('none');
  t.ok(near(o.v.step_s, 9.915548) && o.step === '9.92 s', 'no overlap: every collective adds to the step', JSON.stringify([o.v.step_s, o.step]));
  o = await mode('perfect');
  t.ok(near(o.v.step_s, 8.388330) && near(o.v.mfu_pct, 44.65401), 'perfect overlap: compute and bubble alone', JSON.stringify(o.v.step_s));
  o = await mode('rule-cm');
  t.ok(near(o.v.step_s, 8.397073) && o.v.exposed_tp_s === 0 && o.groups.join() === 'PP,DP', '70B, TP as collective matmuls: every projection has w/7 >= 1,170 > 1,099 and hides', JSON.stringify([o.v.step_s, o.groups]));
  // 8B with TP 8 on 64 GPUs: QKV (6,144/7 = 878) and output (4,096/7 = 585) fall below 1,099 in the forward pass only: 0.0893639 s.
  await page.evaluate(() => {
    const root = document.querySelector('#fragment-parallelism-explorer [data-widget]');
    const set = (id, v) => { root.querySelector(id).value = String(v); };
    set('#pe-model', '8'); set('#pe-gpus', 64); set('#pe-tp', 8); set('#pe-pp', 1); set('#pe-cp', 1); set('#pe-seq', 8192); set('#pe-gbs', 256); set('#pe-mb', 1); set('#pe-zero', 1); set('#pe-rc', 'selective');
    root.querySelector('#pe-rc').dispatchEvent(new Event('change', { bubbles: true }));
  });
  o = await mode('rule-cm');
  t.ok(near(o.v.exposed_tp_s, 0.0893639) && near(o.v.step_s, 3.839291) && o.groups.join() === 'TP', '8B at TP 8, collective matmuls: the two narrow projections stay partly exposed', JSON.stringify([o.v.exposed_tp_s, o.v.step_s, o.groups]));
  o = await mode('rule');
  t.ok(near(o.v.step_s, 4.818897), '8B at TP 8, plain TP by the rule', JSON.stringify(o.v.step_s));
  await page.evaluate(() => window.folioPresets['parallelism-explorer']('405b-16k-zero3'));
  o = await mode('rule');
  t.ok(o.groups.join() === 'TP,PP,DP' && o.step === '9.25 s', '405B ZeRO-3: the headline names the exposed groups', JSON.stringify([o.step, o.groups]));
  // The overlap timeline's TP verdict is computed: over NVLink all four projections hide, over the network none does.
  const tpVerdict = async (link) => page.evaluate((link) => {
    window.folioOverlapTimeline.apply('tp-overlap');
    const root = document.querySelector('#fragment-overlap-timeline [data-widget]');
    const sel = root.querySelector('#ot-link');
    sel.value = link; sel.dispatchEvent(new Event('change', { bubbles: true }));
    return { v: JSON.parse(root.getAttribute('data-values')), text: root.querySelector('.ot-summary').innerText };
  }, link);
  let tv = await tpVerdict('450');
  t.ok(tv.v.below.length === 0 && /QKV 1,463, output 1,170, gate and up 8,192, down 4,096/.test(tv.text) && /all four are enough/.test(tv.text), 'timeline, TP over NVLink: all four projections are above 1,099', tv.text);
  tv = await tpVerdict('50');
  t.ok(tv.v.below.length === 4 && /all four are below/.test(tv.text) && tv.v.threshold === 9890, 'timeline, TP over the network: all four are below 9,890', tv.text);
  t.ok(expects.every((e) => e.spec.split(':').length === 3), 'every data-expect names widget:preset:key',
    expects.filter((e) => e.spec.split(':').length !== 3).map((e) => e.spec).join(' '));
}

// Bad input is refused visibly rather than rounded or drawn, and the explorer's pricing rules hold.
async function checkRefusals(page) {
  const pe = '#fragment-parallelism-explorer';
  await page.locator(pe).scrollIntoViewIfNeeded();
  const layout = (o) => page.evaluate((o) => {
    const root = document.querySelector('#fragment-parallelism-explorer [data-widget]');
    for (const [id, v] of Object.entries(o)) root.querySelector('#pe-' + id).value = String(v);
    root.querySelector('#pe-model').dispatchEvent(new Event('change', { bubbles: true }));
    return JSON.parse(root.getAttribute('data-values'));
  }, o);
  // Llama 3 405B's split: 126 layers in 16 stages as 7, 8 x 14, 7. With 128 micro-batches stage 1 is the
  // fullest, 8 layers x 15 in flight = 120 (stage 0: 7 x 16 = 112), 31.75 x 8192 x 16384/8 B a layer:
  // 120 x 532,676,608 B = 63.921 GB of activations (python3, issue 34).
  const uneven = await layout({ model: '405', gpus: 1024, tp: 8, pp: 16, cp: 1, seq: 8192, gbs: 1024, mb: 1, zero: 1, rc: 'selective' });
  t.ok(!uneven.error && JSON.stringify(uneven.stage_layers) === JSON.stringify([7, ...Array(14).fill(8), 7]) && uneven.peak_stage === 1 &&
    uneven.inflight === 15 && Math.abs(uneven.act_gb - 63.92119296) < 1e-6, 'the explorer splits 126 layers into 16 stages as Llama 3 405B did (7, 8 x 14, 7)',
    JSON.stringify([uneven.stage_layers, uneven.peak_stage, uneven.inflight, uneven.act_gb]));
  // The memory calculator splits and counts the same way (section 8's note): the same stage 1 of 8 layers with
  // 15 micro-batches, the same 63.921 GB of activations and 17.402 GB of states (ZeRO-1 over 8: 5.5 B x 405e9/128).
  const mcUneven = await page.evaluate(() => {
    const root = document.querySelector('#fragment-memory-calculator [data-widget]');
    const set = (id, v) => { root.querySelector(id).value = String(v); };
    set('#mc-model', '405'); set('#mc-layer', 'llama'); set('#mc-seq', 8192); set('#mc-mb', 1); set('#mc-precision', 'mixed');
    set('#mc-tp', 8); set('#mc-pp', 16); set('#mc-dp', 8); set('#mc-zero', 1); set('#mc-recompute', 'selective');
    root.querySelector('#mc-pp').dispatchEvent(new Event('change', { bubbles: true }));
    return { v: JSON.parse(root.getAttribute('data-values')), formula: root.querySelector('.mc-formulas').innerText };
  });
  t.ok(!mcUneven.v.error && JSON.stringify(mcUneven.v.stage_layers) === JSON.stringify(uneven.stage_layers) && mcUneven.v.peak_stage === 1 &&
    mcUneven.v.inflight === 15 && Math.abs(mcUneven.v.act_gb - uneven.act_gb) < 1e-9 && Math.abs(mcUneven.v.total_gb - uneven.total_gb) < 1e-9 &&
    /8 layers \u00d7 15 micro-batches in flight on stage 1, the fullest \(uneven stages: 7, 8 \u00d7 14, 7 layers\)/.test(mcUneven.formula),
    'the memory calculator splits 405B in 16 stages as the explorer does', JSON.stringify([mcUneven.v, uneven.total_gb]));
  const formula = await page.$eval(pe, (e) => e.querySelector('.pe-formulas').innerText);
  t.ok(/Uneven stages: 7, 8 \u00d7 14, 7 layers/.test(formula), 'the explorer says the uneven split', formula.slice(0, 400));
  await layout({ cp: 16 });
  const refused = await page.$eval(pe, (e) => ({ text: e.querySelector('.pe-summary').innerText, visible: e.querySelector('.pe-summary .warn')?.offsetHeight > 0,
    values: e.querySelector('[data-widget]').getAttribute('data-values'), bars: e.querySelectorAll('.pe-chart rect').length }));
  t.ok(/= 2048 does not divide 1024 GPUs/.test(refused.text) && refused.visible && refused.bars === 0 && /"error":true/.test(refused.values),
    'the explorer refuses TP 8 x PP 16 x CP 16 on 1,024 GPUs, visibly', JSON.stringify(refused));
  await page.evaluate(() => window.folioPresets['parallelism-explorer']('8b-512'));
  const dp = await widgetValues(page, 'parallelism-explorer');
  t.ok(dp.dp_link === 'network' && dp.dp === 512, '8B on 512 GPUs: the data-parallel group spans nodes, so it is not NVLink', JSON.stringify(dp));
  // Hand-computed: 8B, ZeRO-3 over n = 512 with m = 2 micro-batches moves 3·m·(n−1)/n·2Ψ = 95.81 GB, three times ZeRO-1's 31.94.
  await page.evaluate(() => window.folioPresets['parallelism-explorer']('8b-512-zero3'));
  const z3 = await widgetValues(page, 'parallelism-explorer');
  t.ok(z3.micro === 2 && Math.abs(z3.dp_gb - 95.8125) < 1e-6 && Math.abs(z3.dp_gb / dp.dp_gb - 3) < 1e-9, 'ZeRO-3 traffic counts every micro-batch',
    `${z3.dp_gb} GB against ${dp.dp_gb}`);
  // 70B at 131k with CP 16 and TP 8: K and V of h_kv/t = 128 features, 3·15·2·8192·128·2 B × 20 layers × 32 = 120.8 GB.
  await page.evaluate(() => window.folioPresets['parallelism-explorer']('70b-131k'));
  const cp = await widgetValues(page, 'parallelism-explorer');
  t.ok(Math.abs(cp.cp_gb - 120.7959552) < 1e-6 && cp.cp_link === 'network', 'CP traffic divides h_kv by TP', JSON.stringify(cp.cp_gb));
  // A pipeline that stays inside one node (8B on 8 GPUs, TP 2 × PP 4) is priced as NVLink.
  await page.evaluate(() => {
    const root = document.querySelector('#fragment-parallelism-explorer [data-widget]');
    const set = (id, v) => { root.querySelector(id).value = String(v); };
    set('#pe-model', '8'); set('#pe-gpus', 8); set('#pe-tp', 2); set('#pe-pp', 4); set('#pe-cp', 1); set('#pe-gbs', 256); set('#pe-mb', 1);
    root.querySelector('#pe-pp').dispatchEvent(new Event('change', { bubbles: true }));
  });
  const pp = await widgetValues(page, 'parallelism-explorer');
  t.ok(!pp.error && pp.pp_link === 'NVLink' && pp.dp_link === 'NVLink', 'a pipeline inside one node is priced as NVLink', JSON.stringify([pp.pp_link, pp.dp_link]));

  // 400 layouts drawn from every control's options (a fixed pseudo-random walk): each is either refused
  // with a message or gives finite, non-negative numbers, and never throws.
  const odd = await page.evaluate(() => {
    const root = document.querySelector('#fragment-parallelism-explorer [data-widget]');
    const sels = ['#pe-model', '#pe-gpus', '#pe-tp', '#pe-pp', '#pe-cp', '#pe-seq', '#pe-gbs', '#pe-mb', '#pe-zero', '#pe-rc'].map((id) => root.querySelector(id));
    let seed = 12345, bad = [], valid = 0;
    const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
    for (let i = 0; i < 400; i++) {
      sels.forEach((s) => { s.selectedIndex = rnd(s.options.length); });
      sels[0].dispatchEvent(new Event('change', { bubbles: true }));
      const v = JSON.parse(root.getAttribute('data-values'));
      if (v.error) { if (!root.querySelector('.pe-summary .warn')) bad.push('refused without a message'); continue; }
      valid++;
      for (const [k, x] of Object.entries(v)) if (typeof x === 'number' && !(Number.isFinite(x) && x >= 0)) bad.push(`${k}=${x}`);
    }
    return { bad: bad.slice(0, 5), valid };
  });
  t.ok(odd.bad.length === 0 && odd.valid > 20, 'the explorer gives finite numbers or a message for 400 drawn layouts', JSON.stringify(odd));

  const mc = '#fragment-memory-calculator';
  await page.locator(mc).scrollIntoViewIfNeeded();
  for (const bad of ['2.5', '100', '0', 'abc', '']) {
    await page.fill('#mc-mb', bad);
    const r = await page.$eval(mc, (e) => {
      const err = e.querySelector('.mc-error');
      return err && { text: err.innerText, visible: err.offsetHeight > 0, invalid: e.querySelector('#mc-mb').getAttribute('aria-invalid'),
        values: e.querySelector('[data-widget]').getAttribute('data-values'), bars: e.querySelectorAll('.mc-chart rect').length };
    });
    const said = bad === '' ? /the field is empty/.test(r?.text) : r?.text.includes(`\u201c${bad}\u201d`);
    t.ok(r && r.visible && said && r.invalid === 'true' && r.bars === 0 && /"error":true/.test(r.values),
      `the calculator refuses a micro-batch of "${bad}", visibly, quoting it or saying the field is empty`, JSON.stringify(r));
  }
  await page.fill('#mc-mb', '2');
  const ok = await widgetValues(page, 'memory-calculator');
  t.ok(!ok.error && ok.total_gb > 0, 'a whole micro-batch is accepted again', JSON.stringify(ok));
}

// The sweep counts memory exactly as the explorer does: rows of its CSV, entered into the explorer.
async function checkSweepAgainstExplorer(page) {
  const csv = await page.evaluate(() => fetch('assets/data/sweep-70b.csv').then((r) => r.text()));
  const [head, ...lines] = csv.trim().split('\n');
  const keys = head.split(',');
  const rows = lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [keys[i], v])));
  const Ns = [...new Set(rows.map((r) => r.N))];
  t.ok(['64', '128', '256', '512', '1024'].every((n) => Ns.includes(n)), 'the sweep covers 64 to 1,024 GPUs', Ns.join(' '));
  const picks = rows.filter((_, i) => i % Math.ceil(rows.length / 15) === 0);
  for (const r of picks) {
    const total = await page.evaluate((r) => {
      const root = document.querySelector('#fragment-parallelism-explorer [data-widget]');
      const set = (id, v) => { root.querySelector(id).value = String(v); };
      set('#pe-model', '70'); set('#pe-gpus', r.N); set('#pe-tp', r.tp); set('#pe-pp', r.pp); set('#pe-cp', r.cp);
      set('#pe-seq', 8192); set('#pe-gbs', 2048); set('#pe-mb', r.mb); set('#pe-zero', r.zero); set('#pe-rc', r.recompute);
      root.querySelector('#pe-rc').dispatchEvent(new Event('change', { bubbles: true }));
      return JSON.parse(root.getAttribute('data-values')).total_gb;
    }, r);
    t.ok(typeof total === 'number' && Math.abs(roundTo(total, 2) - Number(r.mem_gb)) < 0.0101,
      `sweep row N=${r.N} dp=${r.dp} tp=${r.tp} pp=${r.pp} cp=${r.cp} mb=${r.mb} ZeRO-${r.zero} ${r.recompute}: same memory as the explorer`,
      `sweep ${r.mem_gb} GB, explorer ${total}`);
  }
}

// On a touch screen a tap on a dot of the sweep describes it in words.
async function checkSweepTap(page) {
  const chart = page.locator('#fragment-config-sweep .sweep-chart');
  await chart.scrollIntoViewIfNeeded();
  const before = await page.$eval('#fragment-config-sweep .sweep-readout', (e) => e.textContent);
  const dot = await page.$eval('#fragment-config-sweep .sweep-dots g[data-fit="1"] circle', (c) => {
    const r = c.getBoundingClientRect();
    return { x: r.x + r.width / 2, y: r.y + r.height / 2, inView: r.y > 0 && r.y < innerHeight };
  });
  await page.touchscreen.tap(dot.x, dot.y);
  const after = await page.$eval('#fragment-config-sweep .sweep-readout', (e) => e.textContent);
  t.ok(dot.inView && after !== before && /^\d[\d,]* GPUs: DP \d+/.test(after), 'phone: tapping a dot of the sweep reads out its configuration', after);
}

function watch(page, problems, allow404 = []) {
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const where = m.location()?.url || '';
    if (/Failed to load resource/.test(m.text()) && allow404.some((s) => where.includes(s))) return;
    problems.push(`console error: ${m.text()} ${where}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    const why = r.failure()?.errorText || '';
    if (/ERR_ABORTED/.test(why) && /\.(ogg|svg|png|jpg|webp)$/.test(new URL(r.url()).pathname)) return; // media cancelled on navigation
    problems.push(`request failed: ${r.url()} ${why}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !allow404.some((s) => r.url().includes(s))) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
}

async function allFragmentsSettled(page, timeout = 20000) {
  await page.waitForFunction(() => {
    const els = [...document.querySelectorAll('[id^="fragment-"]')];
    return els.length > 0 && els.every((e) => ['loaded', 'error'].includes(e.getAttribute('data-fragment-state')));
  }, null, { timeout });
}

try {
  folio = await startFolio({ root: SOURCE_ROOT });
  browser = await launchBrowser();

  // ---- light mode, desktop ------------------------------------------------------------------
  const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 }, colorScheme: 'light', reducedMotion: 'reduce' });
  const page = await ctx.newPage();
  const problems = [];
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  watch(page, problems, [MISSING]);
  await page.goto(folio.url, { waitUntil: 'load', timeout: 30000 });
  await allFragmentsSettled(page);
  t.ok(true, 'page loads and every fragment settles');

  const frags = await page.$$eval('[id^="fragment-"]', (els) => els.map((e) => ({
    id: e.id, state: e.getAttribute('data-fragment-state'), children: e.children.length,
    loading: !!e.querySelector('.fragment-loading'), text: e.textContent.trim().length,
  })));
  t.ok(frags.length >= 4, 'page has 4+ fragment elements', `found ${frags.length}`);
  for (const f of frags) {
    t.ok(f.state === 'loaded' && f.children > 0 && !f.loading && f.text > 0, `#${f.id} is filled`, `state=${f.state} children=${f.children}`);
  }
  await page.screenshot({ path: shot('top') });

  // Every fragment script ran once: one bound widget per interactive fragment.
  for (const name of ['memory-calculator', 'parallelism-explorer', 'pipeline-schedule']) {
    const n = await page.$$eval(`#fragment-${name} [data-bound="1"]`, (els) => els.length);
    t.ok(n === 1, `#fragment-${name} script ran`, `${n} bound widgets`);
    t.ok(await page.$(`#fragment-${name} svg`) !== null, `#fragment-${name} drew an SVG`);
  }

  // Controls change the output.
  for (const [name, steps] of Object.entries(INTERACTIVE)) {
    const root = `#fragment-${name}`;
    await page.locator(root).scrollIntoViewIfNeeded();
    for (const step of steps) {
      const before = await page.$eval(`${root} ${step.chart}`, (e) => e.innerHTML);
      await step.act(page);
      await page.waitForFunction(([sel, html]) => document.querySelector(sel)?.innerHTML !== html,
        [`${root} ${step.chart}`, before], { timeout: 5000 }).catch(() => {});
      const after = await page.$eval(`${root} ${step.chart}`, (e) => e.innerHTML);
      t.ok(after !== before, `${name} reacts to ${step.label}`);
    }
    if (name !== 'config-sweep') await page.locator(root).screenshot({ path: shot(`fragment-${name}`) });
  }
  // The calculator's activations bar shrinks with full recomputation (a sanity check on the numbers).
  const actWidth = async () => +(await page.$eval('#fragment-memory-calculator .mc-seg-act', (e) => e.getAttribute('width')));
  await page.selectOption('#mc-recompute', 'none');
  const wNone = await actWidth();
  await page.selectOption('#mc-recompute', 'full');
  const wFull = await actWidth();
  t.ok(wFull < wNone, 'full recomputation shrinks the activations bar', `${wNone} -> ${wFull}`);

  // Re-injection (what live reload does) leaves one working widget, not two.
  await page.evaluate(() => window.folioFragments.reload('memory-calculator'));
  await page.waitForFunction(() => document.getElementById('fragment-memory-calculator').getAttribute('data-fragment-state') === 'loaded');
  const bound = await page.$$eval('#fragment-memory-calculator [data-bound="1"]', (els) => els.length);
  t.ok(bound === 1, 're-injected memory calculator is bound once', `${bound}`);
  const before = await page.$eval('#fragment-memory-calculator .mc-chart', (e) => e.innerHTML);
  await page.selectOption('#mc-model', '13');
  const after = await page.$eval('#fragment-memory-calculator .mc-chart', (e) => e.innerHTML);
  t.ok(before !== after, 're-injected memory calculator still reacts');

  // A missing fragment: one request (404 is final), a visible polite message in place.
  const missingUrl = `fragments/${MISSING}.html`;
  await page.evaluate((name) => {
    const el = document.createElement('div');
    el.id = 'fragment-' + name;
    document.querySelector('#cheat-sheet').appendChild(el);
    return window.folioFragments.reload(name);
  }, MISSING);
  await page.waitForFunction((id) => document.getElementById(id)?.getAttribute('data-fragment-state') === 'error', `fragment-${MISSING}`, { timeout: 5000 }).catch(() => {});
  const missing = await page.$eval(`#fragment-${MISSING}`, (e) => ({ state: e.getAttribute('data-fragment-state'), text: e.innerText, visible: e.offsetHeight > 0 }));
  t.ok(missing.state === 'error', 'missing fragment ends in the error state', missing.state);
  t.ok(/could not be loaded/i.test(missing.text) && missing.text.includes(missingUrl) && missing.visible, 'missing fragment shows a visible message naming it', missing.text);
  await page.waitForTimeout(1200);   // a retry would have fired after 1 s
  t.ok(requests.filter((u) => u.includes(missingUrl)).length === 1, 'a 404 fragment is not retried');
  await page.evaluate((id) => document.getElementById(id).remove(), `fragment-${MISSING}`);

  // The table of contents follows the reader.
  for (const id of ['pipeline-parallelism', 'kernels', 'data-parallelism']) {
    await page.evaluate((i) => { document.documentElement.style.scrollBehavior = 'auto'; document.getElementById(i).scrollIntoView(); }, id);
    await page.waitForFunction((i) => document.querySelector('#toc a.active')?.getAttribute('href') === '#' + i, id, { timeout: 3000 }).catch(() => {});
    const active = await page.$eval('#toc', (e) => e.querySelector('a.active')?.getAttribute('href'));
    t.ok(active === '#' + id, `contents highlight #${id} when it is read`, `active=${active}`);
  }
  await page.locator('#band-pipeline').scrollIntoViewIfNeeded();
  await page.locator('#band-pipeline').screenshot({ path: shot('wide-figure') });

  // Every image decodes (lazy images forced to load), the audio's metadata loads, the iframe works.
  await page.evaluate(() => document.querySelectorAll('img[loading="lazy"]').forEach((i) => { i.loading = 'eager'; }));
  await page.waitForFunction(() => [...document.images].every((i) => i.complete), null, { timeout: 15000 }).catch(() => {});
  const broken = await page.$$eval('img', (imgs) => imgs.filter((i) => !(i.complete && i.naturalWidth > 0)).map((i) => i.currentSrc || i.src));
  t.ok(broken.length === 0, 'every image decodes', broken.join(', '));
  const duration = await page.evaluate(() => new Promise((resolve) => {
    const a = document.querySelector('audio');
    if (a.readyState >= 1) return resolve(a.duration);
    a.addEventListener('loadedmetadata', () => resolve(a.duration), { once: true });
    a.addEventListener('error', () => resolve(-1), { once: true });
    a.load();
    setTimeout(() => resolve(a.readyState >= 1 ? a.duration : -2), 8000);
  }));
  t.ok(duration > 1 && duration < 60, 'the audio clip loads (file name with a space and a comma)', `duration ${duration}`);
  const frame = page.frameLocator('#fig-roofline-iframe iframe');
  const frameText = await frame.locator('#result').textContent({ timeout: 10000 }).catch((e) => 'error: ' + e.message);
  t.ok(/TFLOP\/s/.test(frameText), 'the iframe page loads its JSON and renders', frameText);

  // Anchor navigation to a reference works.
  await page.click('a.cite[href="#ref-zero"]');
  t.ok(await page.evaluate(() => location.hash === '#ref-zero' && document.querySelector('#ref-zero:target') !== null), 'citation links jump to their reference');

  await checkPresets(page);
  await checkRefusals(page);
  await checkSweepAgainstExplorer(page);

  t.ok(problems.length === 0, 'no console errors or failed requests (light, desktop)', problems.join(' | '));
  await ctx.close();

  // ---- dark mode and a phone ----------------------------------------------------------------
  for (const [label, opts] of [
    ['dark', { viewport: { width: 1366, height: 900 }, colorScheme: 'dark' }],
    ['phone', { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true, colorScheme: 'light' }],
  ]) {
    const c = await browser.newContext({ ...opts, reducedMotion: 'reduce' });   // no smooth scrolling
    const p = await c.newPage();
    const probs = [];
    watch(p, probs);
    await p.goto(folio.url, { waitUntil: 'load', timeout: 30000 });
    await allFragmentsSettled(p);
    const states = await p.$$eval('[id^="fragment-"]', (els) => els.map((e) => e.getAttribute('data-fragment-state')));
    t.ok(states.every((s) => s === 'loaded'), `${label}: every fragment loads`, states.join(','));
    const bg = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
    if (label === 'dark') t.ok(/rgb\((\d+), (\d+), (\d+)\)/.test(bg) && +bg.match(/\d+/)[0] < 60, 'dark: the page is dark', bg);
    // The causal zig-zag bitmap follows the scheme: its blank upper triangle and grid lines are the page's dark, not white.
    const zig = await p.evaluate(async () => {
      const img = document.querySelector('#fig-causal-zigzag img');
      img.loading = 'eager';
      img.scrollIntoView();
      if (!img.complete || !img.naturalWidth) await new Promise((r) => { img.addEventListener('load', r, { once: true }); setTimeout(r, 5000); });
      const c = document.createElement('canvas');
      c.width = img.naturalWidth; c.height = img.naturalHeight;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      const px = (x, y) => [...g.getImageData(x, y, 1, 1).data].slice(0, 3);
      return { src: img.currentSrc, masked: px(c.width - 10, 10), line: px(0, 0) };
    });
    const lum = (rgb) => rgb ? (rgb[0] + rgb[1] + rgb[2]) / 3 : NaN;
    if (label === 'dark') t.ok(/causal-zigzag-dark\.png$/.test(zig.src) && lum(zig.masked) < 70 && lum(zig.line) < 70, 'dark: the causal zig-zag bitmap is drawn on dark', JSON.stringify(zig));
    else t.ok(/causal-zigzag\.png$/.test(zig.src) && lum(zig.masked) > 200, 'light: the causal zig-zag bitmap is drawn on light', JSON.stringify(zig));
    if (label === 'phone') {
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      t.ok(overflow <= 1, 'phone: no horizontal scrolling of the page', `${overflow}px too wide`);
    }
    await p.screenshot({ path: shot(`top-${label}`) });
    if (label === 'phone') await checkSweepTap(p);
    if (label === 'phone') {
      // A viewport shot from the widget's top: an element shot taller than the screen makes Playwright
      // resize the viewport, which is not what a phone shows.
      await p.evaluate(() => document.getElementById('fragment-memory-calculator').scrollIntoView({ block: 'start' }));
      await p.screenshot({ path: shot('phone-memory-calculator') });
    }
    t.ok(probs.length === 0, `${label}: no console errors or failed requests`, probs.join(' | '));
    await c.close();
  }
  console.log(`screenshots in ${ARTIFACTS}`);
} catch (e) {
  t.ok(false, 'browser run', e.stack || e.message);
} finally {
  await cleanup();
}
t.finish();
