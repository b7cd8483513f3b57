// Deep links: the view's state in the URL, e.g. /explorer?table=minilm&token=king&k=8.

export const DEFAULTS = {
  table: "", token: "", k: 8, points: 5000, selection: "first", seed: 0, labels: "",
};

/** The state a link asks for, with defaults for what it leaves out. */
export function readLink(search = window.location.search) {
  const params = new URLSearchParams(search);
  const state = { ...DEFAULTS };
  for (const name of ["table", "token", "selection", "labels"]) {
    if (params.has(name)) state[name] = params.get(name);
  }
  for (const name of ["k", "points", "seed"]) {
    const value = Number.parseInt(params.get(name) ?? "", 10);
    if (Number.isFinite(value) && value >= 0) state[name] = value;
  }
  if (!["first", "random"].includes(state.selection)) state.selection = DEFAULTS.selection;
  return state;
}

/** Put `state` in the address bar (no reload), leaving defaults out. */
export function writeLink(state) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(state)) {
    if (value !== DEFAULTS[name] || name === "table") params.set(name, String(value));
  }
  if (state.selection !== "random") params.delete("seed");
  const url = `${window.location.pathname}?${params}`;
  window.history.replaceState(null, "", url);
}
