// The API documentation: Swagger UI, shipped in the package (vendor/swagger-ui), over the
// server's own OpenAPI document. Nothing is fetched from a CDN; the document and "Try it out"
// go through the same API key as the explorer (asked once per tab, on the first 401).

import { apiKey, get, onKeyNeeded } from "./common/api.js";
import { askForKey } from "./common/keys.js";

onKeyNeeded(askForKey);

const spec = await get("openapi.json");
window.ui = window.SwaggerUIBundle({
  spec,
  dom_id: "#api-docs",
  deepLinking: true,
  // The online validator badge would send the document to swagger.io.
  validatorUrl: null,
  requestInterceptor: (request) => {
    const key = apiKey();
    if (key) request.headers.Authorization = `Bearer ${key}`;
    return request;
  },
});
