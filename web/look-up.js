// The look-up box: an address or CIDR, a threat, a sensor, a country or an AS over a chosen window, answered by
// /api/search (bounded on the server), newest first, a page at a time; a new search or leaving the page aborts the
// last. Returns `lookUp(field, value, span)`: the same search asked from elsewhere on the page (a top list).
export function setUpLookUp(form, results, note, more, renderRow) {
  let running = null;
  let next = null;
  let last = null;

  async function run(before) {
    running?.abort();
    const abort = new AbortController();
    running = abort;
    const data = new FormData(form);
    const value = String(data.get('value') ?? '').trim();
    if (value === '') return;
    const params = new URLSearchParams({ since: String(data.get('window')), limit: '50' });
    params.set(String(data.get('field')), value);
    if (before) params.set('before', before);
    else results.replaceChildren();
    last = params;
    note.textContent = 'searching…';
    more.hidden = true;
    try {
      const res = await fetch(`/api/search?${params}`, { cache: 'no-store', signal: abort.signal });
      const body = await res.json();
      if (!res.ok) {
        note.textContent = body.error?.message ?? `HTTP ${res.status}`;
        return;
      }
      for (const record of body.records) results.append(renderRow(record));
      next = body.next;
      more.hidden = next === null;
      const shown = results.rows.length;
      note.textContent = body.bounded
        ? `${shown} found; the search stopped after reading ${body.bounded.maxRecords.toLocaleString('en')} records or ${Math.round(body.bounded.maxBytes / 1048576)} MiB: narrow the window for older ones`
        : `${shown} found${next === null ? '' : ', more below'}`;
    } catch (error) {
      if (!abort.signal.aborted) note.textContent = String(error.message);
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void run(null);
  });
  more.addEventListener('click', () => {
    if (next !== null && last !== null) void run(next);
  });
  window.addEventListener('pagehide', () => running?.abort());
  return (field, value, span) => {
    form.elements.field.value = field;
    form.elements.value.value = value;
    form.elements.window.value = span;
    form.scrollIntoView({ block: 'start' });
    void run(null);
  };
}
