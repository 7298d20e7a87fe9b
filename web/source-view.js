// The source view: what one source address (or network) did, from /api/source (the summary of `threatcol
// source show`), shown while the view filters by that source. Every value is put in the page as text.
const LABELS = ['informational', 'low', 'medium', 'high', 'critical'];
let running = null;
let hooked = false;

/** Shows `address`'s summary in `section`, or hides it when `address` is undefined; a newer call aborts the last. */
export function showSource(section, address) {
  running?.abort();
  running = null;
  section.hidden = address === undefined;
  if (address === undefined) return;
  const abort = new AbortController();
  running = abort;
  const title = section.querySelector('.source-address');
  const body = section.querySelector('tbody');
  const note = section.querySelector('.source-note');
  title.textContent = address;
  body.replaceChildren();
  note.textContent = 'reading the last 30 days…';
  void (async () => {
    try {
      const res = await fetch(`/api/source?${new URLSearchParams({ address })}`, {
        cache: 'no-store',
        signal: abort.signal,
      });
      const s = await res.json();
      if (!res.ok) {
        note.textContent = s.error?.message ?? `HTTP ${res.status}`;
        return;
      }
      body.replaceChildren(...rows(s).map(([name, value]) => row(name, value)));
      note.textContent = s.bounded
        ? `the read stopped after ${s.bounded.maxRecords.toLocaleString('en')} records or ${Math.round(s.bounded.maxBytes / 1048576)} MiB: the counts cover the newest records`
        : `since ${s.since.replace('T', ' ').slice(0, 16)} UTC`;
    } catch (error) {
      if (!abort.signal.aborted) note.textContent = String(error.message);
    }
  })();
  if (!hooked) window.addEventListener('pagehide', () => running?.abort());
  hooked = true;
}

function rows(s) {
  const list = (items) => items.join(', ');
  const out = [
    ['first seen', s.first_seen ?? 'no records'],
    ['last seen', s.last_seen ?? ''],
    ['records', `${s.records} (${list(LABELS.map((label, i) => `${label} ${s.criticality[i]}`))})`],
    ['sensors', list(s.sensors)],
    ['destinations', `${s.targets}: ${list(s.top_targets.map((t) => `${t.address} ×${t.count}`))}`],
    ['ports', `${s.ports}: ${list(s.top_ports.map((p) => `${p.port} ×${p.count}`))}`],
    ['threats', list(s.threats.map((t) => `${t.threat} ×${t.count}`))],
  ];
  // The country and the AS open the look-up of their records when clicked (dashboard.js: data-look-up). A network
  // whose records name several says how many (as `source show` does), not one of them.
  const country =
    s.country !== null
      ? lookUpSpan(s.country, 'src_country', s.country)
      : s.countries > 1
        ? `${s.countries} countries`
        : null;
  const asn =
    s.asn !== null
      ? lookUpSpan(`AS${s.asn}`, 'src_asn', String(s.asn))
      : s.asns > 1
        ? `${s.asns} ASes`
        : null;
  if (country !== null || asn !== null)
    out.push(['network', [country, asn, s.asn === null ? null : s.as_org].filter((v) => v !== null)]);
  // An allow entry that covers a block keeps it out of every feed: the firewalls do not block it.
  const keptOut =
    s.blocked && s.allowed ? ` (not in the feeds: the allow entry ${s.allowed.network} keeps it out)` : '';
  out.push([
    'blocked',
    s.blocked
      ? `yes: ${s.blocked.address} by ${s.blocked.rule} until ${s.blocked.until}${keptOut}`
      : s.blocks_within > 0
        ? `no; ${s.blocks_within} within: ${[...s.blocks_within_first, ...(s.blocks_within > s.blocks_within_first.length ? ['…'] : [])].join(', ')}`
        : 'no',
  ]);
  out.push(['allowed', s.allowed ? `yes: ${s.allowed.network} (${s.allowed.reason})` : 'no']);
  return out;
}

function lookUpSpan(text, field, value) {
  const span = document.createElement('span');
  span.textContent = text;
  span.dataset.lookUp = field;
  span.dataset.value = value;
  span.className = 'filterable';
  span.title = `look up the records of ${text}`;
  span.dataset.window = '30d';
  return span;
}

/** A row of the summary: `value` as text, or a list of elements and texts separated by spaces. */
function row(name, value) {
  const tr = document.createElement('tr');
  const th = document.createElement('th');
  th.textContent = name;
  const td = document.createElement('td');
  td.className = 'wrap';
  if (Array.isArray(value))
    value.forEach((part, i) => {
      if (i > 0) td.append(' ');
      td.append(part);
    });
  else td.textContent = String(value);
  tr.append(th, td);
  return tr;
}
