// The figure as PNG through cairo's image surface: cairo rasterizes the same
// lines and text the SVG holds (antialiased, with the system's sans-serif font)
// and cairo_surface_write_to_png encodes the file, so no PNG encoder or font
// renderer is written here. Built only when CMake found cairo (pkg-config);
// without it --plot FILE.png says so and SVG still works.
#include "sim/plot.h"

#ifdef DRAPLANE_HAVE_CAIRO
#include <cairo.h>

#include <cstdlib>
#include <memory>
#endif

namespace draplane::sim {

#ifdef DRAPLANE_HAVE_CAIRO
namespace {

void set_color(cairo_t* cr, const char* hex) {
  long rgb = std::strtol(hex + 1, nullptr, 16);  // "#rrggbb"
  cairo_set_source_rgb(cr, static_cast<double>((rgb >> 16) & 0xff) / 255, static_cast<double>((rgb >> 8) & 0xff) / 255,
                       static_cast<double>(rgb & 0xff) / 255);
}

class CairoCanvas : public Canvas {
 public:
  explicit CairoCanvas(cairo_t* cr) : cr_(cr) {
    cairo_set_source_rgb(cr_, 1, 1, 1);
    cairo_paint(cr_);
    cairo_select_font_face(cr_, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  }
  void line(double x1, double y1, double x2, double y2, const char* color, double width) override {
    set_color(cr_, color);
    cairo_set_line_width(cr_, width);
    cairo_move_to(cr_, x1, y1);
    cairo_line_to(cr_, x2, y2);
    cairo_stroke(cr_);
  }
  void frame(double x, double y, double w, double h) override {
    cairo_set_source_rgb(cr_, 0, 0, 0);
    cairo_set_line_width(cr_, 1);
    cairo_rectangle(cr_, x, y, w, h);
    cairo_stroke(cr_);
  }
  void curve(const std::vector<std::pair<double, double>>& points, const char* color, bool dashed,
             const std::string&) override {
    if (points.empty()) return;
    set_color(cr_, color);
    cairo_set_line_width(cr_, dashed ? 1 : 1.8);
    const double dash[] = {4, 3};
    cairo_set_dash(cr_, dash, dashed ? 2 : 0, 0);
    cairo_move_to(cr_, points[0].first, points[0].second);
    for (const auto& [x, y] : points) cairo_line_to(cr_, x, y);
    cairo_stroke(cr_);
    cairo_set_dash(cr_, nullptr, 0, 0);
  }
  void text(double x, double y, const std::string& s, TextAlign align, double size, bool vertical) override {
    cairo_set_source_rgb(cr_, 0, 0, 0);
    cairo_set_font_size(cr_, size);
    cairo_text_extents_t ext;
    cairo_text_extents(cr_, s.c_str(), &ext);
    double shift = align == TextAlign::kStart ? 0 : align == TextAlign::kMiddle ? ext.x_advance / 2 : ext.x_advance;
    cairo_save(cr_);
    cairo_translate(cr_, x, y);
    if (vertical) cairo_rotate(cr_, -M_PI / 2);
    cairo_move_to(cr_, -shift, 0);
    cairo_show_text(cr_, s.c_str());
    cairo_restore(cr_);
  }

 private:
  cairo_t* cr_;
};

}  // namespace

bool png_supported() { return true; }

namespace {

// Draws on a kPlotWidth x kPlotHeight image and writes it to `path` as PNG.
template <class Draw>
Result<void> write_png(const std::string& path, Draw draw) {
  std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> surface(
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, kPlotWidth, kPlotHeight), cairo_surface_destroy);
  std::unique_ptr<cairo_t, decltype(&cairo_destroy)> cr(cairo_create(surface.get()), cairo_destroy);
  CairoCanvas canvas(cr.get());
  draw(canvas);
  cairo_surface_flush(surface.get());
  cairo_status_t status = cairo_surface_write_to_png(surface.get(), path.c_str());
  if (status != CAIRO_STATUS_SUCCESS) {
    return invalid_error("cannot write " + path + ": " + cairo_status_to_string(status));
  }
  return {};
}

}  // namespace

Result<void> write_curves_png(const std::vector<FillResult>& runs, const std::string& title, const std::string& path) {
  return write_png(path, [&](Canvas& canvas) { draw_curves(canvas, runs, title); });
}

Result<void> write_chart_png(const Chart& chart, const std::string& path) {
  return write_png(path, [&](Canvas& canvas) { draw_chart(canvas, chart); });
}

#else

bool png_supported() { return false; }

namespace {
Status no_cairo(const std::string& path) {
  return Status{Code::kFailedPrecondition,
                "cannot write " + path + ": this draplane was built without cairo (libcairo2-dev), so only SVG plots are available"};
}
}  // namespace

Result<void> write_curves_png(const std::vector<FillResult>&, const std::string&, const std::string& path) {
  return no_cairo(path);
}

Result<void> write_chart_png(const Chart&, const std::string& path) { return no_cairo(path); }

#endif

}  // namespace draplane::sim
