// threatcol dashboard: plain ES module, DOM APIs only. Every value from a sensor is put in the page with
// textContent (never as HTML), so a threat named <script> is shown as text.
import { blocklistPath, markable, renderBlocklist } from './blocklist.js';
import { drawHistogram } from './histogram.js';
import { setUpLookUp } from './look-up.js';
import { showSource } from './source-view.js';
import { filterable, filterQuery, readFilters, renderChips } from './view-filters.js';

const LABELS = ['informational', 'low', 'medium', 'high', 'critical'];
const MAX_ROWS = 200;
const POLL_MS = 2000;

const $ = (selector) => document.querySelector(selector);
const feedBody = $('#feed tbody');
const filters = $('#filters');
const connection = $('#connection');
const shown = new Set();
let source = null;
/** The view's filters, kept in the URL (view-filters.js); the histogram's range beside them. */
let view = readFilters(location.search);
let range = new URLSearchParams(location.search).get('range') === '7d' ? '7d' : '24h';
/** After the stream's `ready`: rows that arrive now are new, and are highlighted for a moment. */
let live = false;

/** A table cell with `text` as plain text (the one way sensor-supplied text enters the page). */
function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined ? '' : String(text);
  if (className) td.className = className;
  return td;
}

function criticalityCell(level) {
  const td = document.createElement('td');
  const badge = document.createElement('span');
  const n = Number.isInteger(level) && level >= 0 && level <= 4 ? level : 2;
  badge.className = `crit crit-${n}`;
  badge.textContent = `${n} ${LABELS[n]}`;
  if (n > 0) filterable(badge, 'min', n);
  td.append(badge);
  return td;
}

/** A cell whose click opens the look-up of `field` = `value` (none when there is no value). */
function searchCell(text, field, value) {
  const td = cell(text, 'wrap');
  if (value === undefined) return td;
  td.dataset.lookUp = field;
  td.dataset.value = value;
  td.classList.add('filterable');
  td.title = `look up the records of ${text}`;
  return td;
}

/** A feed or look-up row: the values a click can filter by are marked so. */
function recordRow(r) {
  const tr = document.createElement('tr');
  tr.dataset.id = r.id;
  tr.append(
    cell(when(r.received_at)),
    filterable(cell(r.sensor), 'sensor', r.sensor),
    cell(r.endpoint),
    criticalityCell(r.criticality),
    filterable(cell(r.threat, 'wrap threat'), 'threat', r.threat),
    markable(filterable(cell(hostPort(r.src_ip, r.src_port), 'src'), 'src', r.src_ip), r.src_ip),
    markable(cell(hostPort(r.dst_ip, r.dst_port), 'dst'), r.dst_ip),
    cell(r.protocol),
  );
  return tr;
}

function when(iso) {
  return typeof iso === 'string' ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') : '';
}

function hostPort(ip, port) {
  if (port === null || port === undefined) return ip;
  return String(ip).includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

function addRecords(records) {
  for (const r of records) {
    if (shown.has(r.id)) continue;
    shown.add(r.id);
    const tr = recordRow(r);
    if (live) tr.className = 'fresh';
    feedBody.prepend(tr); // newest first
  }
  while (feedBody.rows.length > MAX_ROWS) {
    const last = feedBody.rows[feedBody.rows.length - 1];
    shown.delete(last.dataset.id);
    last.remove();
  }
  $('#feed-count').textContent = `${feedBody.rows.length} shown`;
}

function setConnection(state, text) {
  connection.dataset.state = state;
  connection.textContent = text;
}

/** (Re)opens the event stream with the current filters; the server sends the recent records, then live ones. */
function openFeed() {
  if (source) source.close();
  feedBody.replaceChildren();
  shown.clear();
  live = false;
  source = new EventSource(`/api/feed?${filterQuery(view)}`);
  setConnection('connecting', 'connecting…');
  source.addEventListener('records', (event) => addRecords(JSON.parse(event.data)));
  source.addEventListener('ready', () => {
    live = true;
    setConnection('live', 'live');
  });
  source.addEventListener('failure', () => setConnection('down', 'cannot read the records'));
  source.addEventListener('error', () => {
    setConnection('down', 'reconnecting…');
    // A refused stream (DASHBOARD_BUSY: too many feeds) is not retried by the browser: try again later.
    if (source.readyState === EventSource.CLOSED) setTimeout(openFeed, 5000);
  });
}

function fillRows(tbody, rows) {
  tbody.replaceChildren(
    ...rows.map((cells) => {
      const tr = document.createElement('tr');
      tr.append(...cells);
      return tr;
    }),
  );
}

function renderSummary(s) {
  fillRows(
    $('#by-criticality tbody'),
    [4, 3, 2, 1, 0].map((c) => [criticalityCell(c), cell(s.lastHour[c], 'num'), cell(s.lastDay[c], 'num')]),
  );
  const top = (list) =>
    list.length === 0
      ? () => [[cell('none yet', 'muted'), cell('')]]
      : // Past a few hundred distinct names an hour the counts are estimates (docs/operations.md, Dashboard).
        (key) =>
          list.map((e) => [
            // A name counted cut (ending in …) filters by its first characters: the threat filter is a substring.
            filterable(cell(e.name, 'wrap'), key, e.name.replace(/…$/, '')),
            cell(s.topApproximate ? `≈${e.count}` : e.count, 'num'),
          ]);
  fillRows($('#top-threats tbody'), top(s.topThreats)('threat'));
  fillRows($('#top-sources tbody'), top(s.topSources)('src'));
  // A country or an AS clicked opens the look-up of its records over the list's 24 hours.
  const searchable = (list, field, keyOf) =>
    list.length === 0
      ? [[cell('none yet', 'muted'), cell('')]]
      : list.map((e) => [
          searchCell(e.name, field, keyOf(e.name)),
          cell(s.topApproximate ? `≈${e.count}` : e.count, 'num'),
        ]);
  fillRows(
    $('#top-countries tbody'),
    searchable(s.topCountries, 'src_country', (name) => name),
  );
  fillRows(
    $('#top-asns tbody'),
    searchable(s.topAsns, 'src_asn', (name) => /^AS(\d+)/.exec(name)?.[1]),
  );
  for (const td of document.querySelectorAll('#top-sources td[data-filter="src"]'))
    markable(td, td.dataset.value);
  $('#summary-note').textContent = s.complete
    ? ''
    : 'still counting the stored records of the last 24 hours…';
}

function renderSensors(sensors) {
  fillRows(
    $('#sensors tbody'),
    sensors.map((s) => [
      filterable(cell(s.name), 'sensor', s.name),
      s.silent_since
        ? cell(`silent since ${when(s.silent_since)}`, 'status-silent')
        : cell(s.status, `status-${s.status}`),
      cell(s.timezone_default ? `${s.timezone} (default)` : s.timezone),
      cell(s.last_seen ? when(s.last_seen) : 'never'),
      cell(s.last_address ?? ''),
      cell(s.accepted, 'num'),
      cell(s.rejected, 'num'),
      cell(
        s.last_rejection_code ? `${s.last_rejection_code} at ${when(s.last_rejected_at)}` : '',
        'rejection',
      ),
    ]),
  );
  const select = filters.elements.sensor;
  const chosen = view.sensor ?? '';
  const names = sensors.map((s) => s.name);
  if (chosen && !names.includes(chosen)) names.push(chosen);
  const current = [...select.options].slice(1).map((o) => o.value);
  if (current.join('\n') !== names.join('\n')) {
    select.replaceChildren(select.options[0], ...names.map((n) => new Option(n, n)));
    select.value = chosen;
  }
}

function renderOutputs(outputs) {
  fillRows(
    $('#outputs tbody'),
    outputs.length === 0
      ? [[cell('none configured (outputs in the configuration)', 'muted')]]
      : outputs.map((o) => [
          cell(o.name),
          cell(o.type),
          cell(o.state, `status-${o.state}`),
          cell(o.position ? o.position.lagRecords : '', 'num'),
          cell(o.position ? `${o.position.lagSeconds} s` : '', 'num'),
          cell(o.lastSuccessAt ? when(o.lastSuccessAt) : 'never'),
          cell(o.deadLetters, 'num'),
          cell(o.lastError ?? '', 'rejection'),
        ]),
  );
}

async function getJson(path) {
  const res = await fetch(path, { cache: 'no-store' });
  // Named by its route: a blocklist query holds hundreds of addresses.
  if (!res.ok) throw new Error(`${path.split('?')[0]}: HTTP ${res.status}`);
  return res.json();
}

/** The histogram follows the view's filters but its interval (a bar of it): the same query the feed gets. */
function histogramPath() {
  const { from: _from, to: _to, ...filters } = view;
  return `/api/histogram?${filterQuery(filters, { range })}`;
}

/** Draws an answer for `path` unless the view changed while it was asked for (a newer answer is coming). */
function showHistogram(path, h) {
  if (path === histogramPath()) drawHistogram($('#histogram'), h, Number(view.min ?? 0));
}

/** The Blocklist panel and the marks of the page's addresses. */
async function refreshBlocklist() {
  const asked = blocklistPath();
  renderBlocklist($('#blocklist'), await getJson(asked));
  // The first answer says how many addresses one request may ask about: marked now rather than a poll later.
  const next = blocklistPath();
  if (!asked.includes('?') && next.includes('?')) renderBlocklist($('#blocklist'), await getJson(next));
}

/** Each panel from its own request: one that fails (a refused blocklist query, say) leaves the others updating. */
async function poll() {
  const asked = histogramPath();
  // The blocklist after the summary: its top sources are among the addresses the blocklist is asked about.
  const summary = getJson('/api/summary').then(renderSummary);
  const results = await Promise.allSettled([
    summary,
    summary.catch(() => {}).then(refreshBlocklist),
    getJson('/api/sensors').then((s) => renderSensors(s.sensors)),
    getJson('/api/outputs').then((o) => renderOutputs(o.outputs)),
    getJson(asked).then((h) => showHistogram(asked, h)),
  ]);
  const failed = results.filter((r) => r.status === 'rejected').map((r) => String(r.reason?.message));
  const at = `${new Date().toISOString().slice(11, 19)} UTC`;
  $('#updated').textContent =
    failed.length === 0
      ? `updated ${at}`
      : failed.length === results.length
        ? failed.join('; ')
        : `${failed.join('; ')}; the rest updated ${at}`;
  setTimeout(poll, POLL_MS);
}

/** Applies a new set of filters: the URL, the chips, the form, the feed and the histogram follow. */
function setView(next) {
  view = next;
  const query = filterQuery(view, range === '7d' ? { range } : {});
  history.replaceState(null, '', query ? `?${query}` : location.pathname);
  renderChips($('#chips'), view, (keys) => {
    const rest = { ...view };
    for (const key of keys) delete rest[key];
    setView(rest);
  });
  for (const name of ['sensor', 'endpoint', 'min']) {
    const select = filters.elements[name];
    const value = view[name] ?? (name === 'min' ? '0' : '');
    if (name === 'sensor' && value !== '' && ![...select.options].some((o) => o.value === value))
      select.append(new Option(value, value));
    select.value = value;
  }
  for (const button of document.querySelectorAll('#range button'))
    button.setAttribute('aria-pressed', String(button.value === range));
  openFeed();
  // Every source address clicked (a `src` filter) opens what that source did, whole.
  showSource($('#source-view'), view.src);
  const asked = histogramPath();
  void getJson(asked)
    .then((h) => showHistogram(asked, h))
    .catch(() => {});
}

filters.addEventListener('change', (event) => {
  const { name, value } = event.target;
  const next = { ...view };
  if (value === '' || (name === 'min' && value === '0')) delete next[name];
  else next[name] = value;
  setView(next);
});
filters.addEventListener('submit', (event) => event.preventDefault());
// Click to filter: a value marked filterable anywhere on the page, or a histogram bar (its interval).
document.addEventListener('click', (event) => {
  const bar = event.target.closest?.('#histogram .bar');
  if (bar) {
    setView({ ...view, from: bar.dataset.from, to: bar.dataset.to });
    return;
  }
  const search = event.target.closest?.('[data-look-up]');
  if (search) {
    lookUp(search.dataset.lookUp, search.dataset.value, search.dataset.window ?? '24h');
    return;
  }
  const marked = event.target.closest?.('[data-filter]');
  if (marked && !marked.closest('form')) setView({ ...view, [marked.dataset.filter]: marked.dataset.value });
});
for (const button of document.querySelectorAll('#range button')) {
  button.addEventListener('click', () => {
    range = button.value;
    setView(view);
  });
}
const lookUp = setUpLookUp(
  $('#look-up'),
  $('#look-up-results tbody'),
  $('#look-up-note'),
  $('#look-up-more'),
  recordRow,
);
setView(view);
poll();
