// How many records one page of a look-up (`threats search`, the dashboard's /api/search) may hold: a constant
// of its own so a command's definition can name it without loading the search.

export const SEARCH_MAX_LIMIT = 1000;
