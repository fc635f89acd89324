// landscape.frag: the loss landscape as a height map with contour lines (nilmbuild/train/landscape.py).
// lossTex holds log10(loss) on the n x n grid (texel (j, i): alpha index j, beta index i), sampled
// "nearest" and interpolated bilinearly here (float textures need no linear-filtering extension then).
// Colour: the LUT over [lo, hi]; contours every 1/levels of that range, ~1 px wide, from the value's
// change over one pixel (pxStep: grid units per pixel), so no derivative extension is needed either.
precision highp float;
uniform sampler2D lossTex;
uniform sampler2D lut;
uniform float n;          // grid points per axis
uniform float lo, hi;     // log10 loss range mapped onto the colormap
uniform float levels;     // contour levels across [lo, hi]
uniform vec2 pxStep;      // grid-index units per pixel, x and y
varying vec2 uv;

float val(vec2 ij) { return texture2D(lossTex, (ij + 0.5) / n).r; }

float height(vec2 p) {     // p in grid-index units, 0 .. n-1
  vec2 i0 = clamp(floor(p), vec2(0.0), vec2(n - 2.0));
  vec2 f = clamp(p - i0, 0.0, 1.0);
  float a = val(i0), b = val(i0 + vec2(1.0, 0.0)), c = val(i0 + vec2(0.0, 1.0)), d = val(i0 + vec2(1.0, 1.0));
  return mix(mix(a, b, f.x), mix(c, d, f.x), f.y);
}

void main() {
  vec2 p = uv * (n - 1.0);
  float span = max(hi - lo, 1e-9);
  float t = (height(p) - lo) / span;
  vec4 col = texture2D(lut, vec2(clamp(t, 0.0, 1.0) * (255.0 / 256.0) + 0.5 / 256.0, 0.5));
  float lev = t * levels;
  float gx = abs((height(p + vec2(pxStep.x, 0.0)) - lo) / span * levels - lev);
  float gy = abs((height(p + vec2(0.0, pxStep.y)) - lo) / span * levels - lev);
  float g = max(length(vec2(gx, gy)), 1e-6);                 // level units per pixel
  float d = abs(fract(lev + 0.5) - 0.5) / g;                  // pixels to the nearest contour
  float line = 1.0 - smoothstep(0.5, 1.2, d);
  gl_FragColor = vec4(mix(col.rgb, vec3(1.0), 0.55 * line), 1.0);
}
