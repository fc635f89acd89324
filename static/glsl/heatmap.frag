// heatmap.frag: value texture (one texel per cell, nearest) -> colormap LUT (256 entries, nearest).
// Float textures hold raw values, normalised here with vmin/vmax; the 8-bit fallback is pre-normalised.
#ifdef GL_FRAGMENT_PRECISION_HIGH
precision highp float;
#else
precision mediump float;
#endif
uniform sampler2D values;     // LUMINANCE: raw value (float) or t (uint8, normalised)
uniform sampler2D lut;        // 256 x 1 RGBA colormap
uniform float vmin, vmax;
uniform bool prenormalised;   // true for the 8-bit fallback texture
uniform vec4 nanColor;
varying vec2 uv;
void main() {
  float v = texture2D(values, uv).r;
  if (!prenormalised && !(v == v)) { gl_FragColor = nanColor; return; }  // NaN where the driver keeps it
  float t = prenormalised ? v : (v - vmin) / max(vmax - vmin, 1e-30);
  float idx = floor(clamp(t, 0.0, 1.0) * 255.0 + 0.5);  // same rule as NB.colormaps.map
  gl_FragColor = vec4(texture2D(lut, vec2((idx + 0.5) / 256.0, 0.5)).rgb, 1.0);
}
