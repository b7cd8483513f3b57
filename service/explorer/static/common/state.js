// A page's state in its link: one place that reads the address bar into a state object and
// writes it back, used by both pages (the explorer and Watch training). Each page describes
// its fields once: a default and a kind.
//
// Kinds: "text"; "count" (an integer >= 0); "number" (any finite number); a list of allowed
// values (the default is used for any other); "list" (strings, written as a JSON array);
// "numbers" (finite numbers, written comma-separated, e.g. a camera). A field may say `when`
// it matters (a function of the state); otherwise it is left out of the link.

/** Fields of a page's link: {name: {value: default, kind, when}}. */
export class LinkState {
  constructor(fields) {
    this.fields = fields;
  }

  /** The defaults, as a fresh state object. */
  defaults() {
    return Object.fromEntries(Object.entries(this.fields)
      .map(([name, field]) => [name, copy(field.value)]));
  }

  /** The state a link asks for, with defaults for what it leaves out or gets wrong. */
  read(search = window.location.search) {
    const params = new URLSearchParams(search);
    const state = this.defaults();
    for (const [name, field] of Object.entries(this.fields)) {
      if (!params.has(name)) continue;
      const value = parse(field.kind, params.get(name));
      if (value !== undefined) state[name] = value;
    }
    return state;
  }

  /** The query string for `state`, leaving defaults out (the table is always named). */
  query(state) {
    const params = new URLSearchParams();
    for (const [name, field] of Object.entries(this.fields)) {
      const value = state[name];
      if (value === undefined || (same(value, field.value) && name !== "table")) continue;
      if (field.when && !field.when(state)) continue;
      params.set(name, format(field.kind, value));
    }
    return params.toString();
  }

  /** Put `state` in the address bar (no reload). */
  write(state) {
    window.history.replaceState(null, "", `${window.location.pathname}?${this.query(state)}`);
  }
}

function parse(kind, text) {
  if (Array.isArray(kind)) return kind.find((value) => String(value) === text);
  switch (kind) {
    case "count": {
      const value = Number.parseInt(text, 10);
      return Number.isFinite(value) && value >= 0 ? value : undefined;
    }
    case "number": {
      const value = Number(text);
      return text.trim() !== "" && Number.isFinite(value) ? value : undefined;
    }
    case "list":
      return parseList(text);
    case "numbers": {
      const values = text.split(",").map(Number);
      return text && values.every(Number.isFinite) ? values : undefined;
    }
    default:
      return text;
  }
}

function parseList(text) {
  try {
    const value = JSON.parse(text);
    return Array.isArray(value) && value.every((item) => typeof item === "string")
      ? value : undefined;
  } catch {
    return undefined;
  }
}

function format(kind, value) {
  if (kind === "list") return JSON.stringify(value);
  if (kind === "numbers") return value.join(",");
  return String(value);
}

function same(a, b) {
  return Array.isArray(a) ? Array.isArray(b) && a.join("\u0000") === b.join("\u0000") : a === b;
}

function copy(value) {
  return Array.isArray(value) ? [...value] : value;
}
