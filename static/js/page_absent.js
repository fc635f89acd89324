/* page_absent.js: a page about a component the loaded model does not have (nilmbuild/site/views/upstream_absent.py):
 * its explanation says so and links to what the model has instead; nothing to draw. */
import { registerPage } from "./register.js";
import { page, ready } from "./core.js";

registerPage({ slug: page().slug, start: function () { ready(); return {}; } });
