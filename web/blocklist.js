// The Blocklist panel: active blocks (the newest first, bounded by the server), allow entries, each feed's last
// fetch, and a mark on every address of the page that lies in a block. Every value goes in with textContent.

/** Query text at most: the page's addresses are asked about in one request below Node's header limit. */
const MAX_CHECK_CHARS = 6000;
/** Addresses one request may ask about: the server's bound, as its last answer gave it (`maxChecked`); none before. */
let maxChecked = 0;
/** A feed nobody fetched for this long is flagged (what `threatcol check` warns about). */
const STALE_FETCH_MS = 86_400_000;

/** The last marks: a row added between two polls is marked at once when its address was blocked. */
let marks = {};

/** An address cell: `data-address` is what the marking looks for (feed rows, top sources, look-ups). */
export function markable(element, address) {
  if (typeof address === 'string' && address !== '') {
    element.dataset.address = address;
    applyMark(element);
  }
  return element;
}

function applyMark(element) {
  const mark = Object.hasOwn(marks, element.dataset.address) ? marks[element.dataset.address] : undefined;
  element.classList.toggle('blocked', mark !== undefined);
  if (mark) element.dataset.blocked = `blocked (${mark.address}, ${mark.rule}) until ${when(mark.until)} UTC`;
  else delete element.dataset.blocked;
}

/**
 * The query for /api/blocklist: the distinct addresses on the page, as many as the server takes and the query
 * holds (more is a 400). Until the first answer says how many that is, none: the marks come a poll later.
 */
export function blocklistPath() {
  const seen = new Set();
  let length = 0;
  for (const element of document.querySelectorAll('[data-address]')) {
    if (seen.size >= maxChecked) break;
    const address = element.dataset.address;
    if (seen.has(address)) continue;
    length += encodeURIComponent(address).length + 1;
    if (length > MAX_CHECK_CHARS) break;
    seen.add(address);
  }
  return seen.size === 0
    ? '/api/blocklist'
    : `/api/blocklist?check=${[...seen].map(encodeURIComponent).join(',')}`;
}

function when(iso) {
  return typeof iso === 'string' ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') : '';
}

/** "in 3 h 20 min", "in 40 s": how long a block has left. */
function left(iso, now) {
  const ms = Date.parse(iso) - now;
  if (!(ms > 0)) return 'ended';
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return `in ${Math.ceil(ms / 1000)} s`;
  if (minutes < 60) return `in ${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `in ${hours} h ${minutes % 60} min`;
  return `in ${Math.floor(hours / 24)} d ${hours % 24} h`;
}

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined ? '' : String(text);
  if (className) td.className = className;
  return td;
}

function rows(tbody, list, empty, render) {
  const none = cell(empty, 'muted');
  none.colSpan = tbody.parentElement.tHead.rows[0].cells.length;
  const made = list.length === 0 ? [[none]] : list.map(render);
  tbody.replaceChildren(
    ...made.map((cells) => {
      const tr = document.createElement('tr');
      tr.append(...cells);
      return tr;
    }),
  );
}

/** Draws the panel from an /api/blocklist answer and marks the page's addresses. */
export function renderBlocklist(root, data) {
  const now = Date.now();
  if (Number.isInteger(data.maxChecked) && data.maxChecked >= 0) maxChecked = data.maxChecked;
  const $ = (selector) => root.querySelector(selector);
  const kept = data.keptOut > 0 ? `, ${data.keptOut} kept out of the feeds by an allow entry` : '';
  $('#blocks-note').textContent =
    data.total === 0
      ? data.complete
        ? 'nothing is blocked'
        : 'reading the decisions…'
      : `${data.total} active block${data.total === 1 ? '' : 's'}${kept}${data.total > data.blocks.length ? `; the newest ${data.blocks.length} shown (threatcol block list --all for every one)` : ''}${data.total >= data.maxBlocks ? `; blocklist.maxBlocks (${data.maxBlocks}) reached: the rules block no new address until blocks end` : ''}`;
  rows($('#blocks tbody'), data.blocks, 'none', (b) => {
    const address = cell(b.address, 'address');
    const reason = cell(b.reason, 'wrap reason');
    if (b.allowedBy !== null) {
      address.classList.add('kept-out');
      address.title = `kept out of the feeds by the allow entry ${b.allowedBy}`;
    }
    return [
      address,
      cell(b.rule, b.rule === 'manual' ? 'rule manual' : 'rule'),
      reason,
      cell(when(b.since)),
      cell(`${when(b.until)} (${left(b.until, now)})`),
      cell(b.records, 'num'),
      cell(b.sensors.join(', '), 'wrap'),
      cell(b.allowedBy === null ? (b.who ?? '') : `${b.who ?? ''} — allowed by ${b.allowedBy}`),
    ];
  });
  rows($('#allow tbody'), data.allow, 'none (blocklist.allow, threatcol allow add)', (a) => [
    cell(a.network, 'address'),
    cell(a.reason, 'wrap reason'),
    cell(a.until === null ? 'for good' : when(a.until)),
    cell(a.source === 'configuration' ? 'configuration' : (a.who ?? '')),
  ]);
  $('#allow-note').textContent =
    data.allowTotal > data.allow.length ? `the newest ${data.allow.length} of ${data.allowTotal}` : '';
  rows($('#feeds tbody'), data.feeds, 'none (threatcol feed add)', (f) => {
    const fetch = f.lastFetch;
    const ok = fetch !== null && (fetch.status === 200 || fetch.status === 304);
    const stale = fetch === null || now - Date.parse(fetch.at) > STALE_FETCH_MS;
    return [
      cell(f.name),
      cell(f.format),
      cell(fetch ? when(fetch.at) : 'never', stale ? 'fetch-stale' : ''),
      cell(fetch ? fetch.address : ''),
      cell(fetch ? fetch.status : '', fetch === null ? '' : ok ? 'fetch-ok' : 'fetch-refused'),
    ];
  });
  if (data.blocked !== undefined || data.total === 0) {
    marks = data.blocked ?? {};
    for (const element of document.querySelectorAll('[data-address]')) applyMark(element);
  }
}
