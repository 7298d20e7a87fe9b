// The dashboard's view filters: one object kept in the URL's query string (a view can be bookmarked or pasted
// into a ticket), shown as removable chips; any element with data-filter/data-value on the page sets one.
const KEYS = [
  'sensor',
  'endpoint',
  'min',
  'threat',
  'src',
  'dst',
  'src_country',
  'src_asn',
  'dst_country',
  'dst_asn',
  'from',
  'to',
];
const NAMES = {
  src: 'source',
  dst: 'destination',
  src_country: 'source country',
  src_asn: 'source AS',
  dst_country: 'destination country',
  dst_asn: 'destination AS',
};
const LABELS = ['informational', 'low', 'medium', 'high', 'critical'];

/** The filters in `search` (location.search); unknown keys and empty values are dropped. */
export function readFilters(search) {
  const params = new URLSearchParams(search);
  const filters = {};
  for (const key of KEYS) {
    const value = params.get(key);
    if (value !== null && value !== '' && !(key === 'min' && value === '0')) filters[key] = value;
  }
  return filters;
}

/** The query string of `filters` (plus `extra`, e.g. the histogram's range), without the leading `?`. */
export function filterQuery(filters, extra = {}) {
  const params = new URLSearchParams();
  for (const key of KEYS) if (filters[key] !== undefined) params.set(key, filters[key]);
  for (const [key, value] of Object.entries(extra)) params.set(key, value);
  return params.toString();
}

function chipText(key, value, filters) {
  if (key === 'min') return `criticality ≥ ${value} ${LABELS[Number(value)] ?? ''}`;
  if (key === 'from') return `from ${value.replace('T', ' ').replace(/:00\.000Z$|\.000Z$/, '')} UTC`;
  if (key === 'to')
    return filters.from ? null : `until ${value.replace('T', ' ').replace(/:00\.000Z$/, '')} UTC`;
  return `${NAMES[key] ?? key}: ${value}`;
}

/** One chip per filter, each with a button that removes it (from and to go together: one interval). */
export function renderChips(container, filters, onRemove) {
  const chips = [];
  for (const key of KEYS) {
    const value = filters[key];
    if (value === undefined) continue;
    let text = chipText(key, value, filters);
    if (text === null) continue;
    if (key === 'from' && filters.to) text = `${text} – ${filters.to.slice(11, 16)}`;
    const chip = document.createElement('span');
    chip.className = 'chip';
    chip.dataset.key = key;
    const label = document.createElement('span');
    label.textContent = text;
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.textContent = '×';
    remove.title = `remove this filter`;
    remove.addEventListener('click', () => onRemove(key === 'from' || key === 'to' ? ['from', 'to'] : [key]));
    chip.append(label, remove);
    chips.push(chip);
  }
  container.replaceChildren(...chips);
  container.hidden = chips.length === 0;
}

/** Marks `element` as a click-to-filter value. */
export function filterable(element, key, value) {
  if (value === null || value === undefined || value === '') return element;
  element.dataset.filter = key;
  element.dataset.value = String(value);
  element.classList.add('filterable');
  element.title = `show only ${key === 'min' ? `criticality ≥ ${value}` : String(value)}`;
  return element;
}
