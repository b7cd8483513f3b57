// The JSON API, as the page calls it: one error type, and an API key asked for once.
//
// Every number the page shows comes through here from a documented endpoint. Behind API keys
// the first 401 opens the key dialog; the key is kept in this tab's sessionStorage and sent as
// "Authorization: Bearer <key>" from then on.

const ROOT = new URL("../../../", import.meta.url);
const KEY_ITEM = "embedding-explorer.api-key";

export class ApiError extends Error {
  constructor(status, type, message, details = {}) {
    super(message);
    this.status = status;
    this.type = type;
    this.details = details;
  }
}

let askForKey = async () => null;
let pendingKey = null;

/** Install the function that asks the person for a key (returns it, or null when cancelled). */
export function onKeyNeeded(ask) {
  askForKey = ask;
}

/** GET a path of the API and return the parsed answer; ApiError for any refusal. */
export function get(path) {
  return call(path, undefined);
}

/** POST a JSON body to a table's endpoint, e.g. post("minilm", "neighbors", {...}). */
export function post(table, endpoint, body) {
  return call(`v1/tables/${encodeURIComponent(table)}/${endpoint}`, body);
}

async function call(path, body) {
  let response = await send(path, body);
  let rejected = false;
  while (response.status === 401) {
    const key = await newKey(rejected);
    if (key === null) break;
    rejected = true;
    response = await send(path, body);
  }
  return parse(response);
}

async function send(path, body) {
  const headers = { Accept: "application/json" };
  const key = sessionStorage.getItem(KEY_ITEM);
  if (key) headers.Authorization = `Bearer ${key}`;
  const init = { method: body === undefined ? "GET" : "POST", headers };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  try {
    return await fetch(new URL(path, ROOT), init);
  } catch (error) {
    throw new ApiError(0, "NetworkError", `The server could not be reached (${error.message}).`);
  }
}

// One dialog for every request that was refused at the same time.
async function newKey(rejected) {
  if (!pendingKey) {
    pendingKey = askForKey(rejected).finally(() => {
      pendingKey = null;
    });
  }
  const key = await pendingKey;
  if (key) sessionStorage.setItem(KEY_ITEM, key);
  return key || null;
}

async function parse(response) {
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (response.ok && payload !== null) return payload;
  const error = payload?.error ?? {
    type: `HTTP${response.status}`,
    message: response.statusText || "the answer was not JSON",
  };
  throw new ApiError(response.status, error.type, error.message, error);
}

/** The API key this tab holds, or null. */
export function apiKey() {
  return sessionStorage.getItem(KEY_ITEM);
}

/** The service's root URL (for links such as /docs). */
export function rootUrl(path = "") {
  return new URL(path, ROOT).href;
}
