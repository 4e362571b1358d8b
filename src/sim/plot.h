// The paper's figure: GPU allocation ratio (y, %) against arrived workload
// (x, % of GPU capacity), one curve per policy (the mean over its seeds), and
// the fragmented share dashed in the same colour. As SVG (text, always) or PNG
// (cairo's image surface, when the build found cairo: plot_png.cc).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "sim/simulator.h"

namespace draplane::sim {

constexpr int kPlotWidth = 720, kPlotHeight = 480;  // pixels (PNG) or SVG user units

enum class TextAlign { kStart, kMiddle, kEnd };

// What the figure is drawn on: pixels from the top left, colours "#rrggbb".
class Canvas {
 public:
  virtual ~Canvas() = default;
  virtual void line(double x1, double y1, double x2, double y2, const char* color, double width) = 0;
  virtual void frame(double x, double y, double w, double h) = 0;  // black, unfilled
  // One policy's curve: allocated solid, fragmented dashed.
  virtual void curve(const std::vector<std::pair<double, double>>& points, const char* color, bool dashed,
                     const std::string& policy) = 0;
  // y is the baseline; vertical text reads bottom to top, centred on (x, y).
  virtual void text(double x, double y, const std::string& s, TextAlign align, double size, bool vertical) = 0;
};

void draw_curves(Canvas& canvas, const std::vector<FillResult>& runs, const std::string& title);

std::string curves_svg(const std::vector<FillResult>& runs, const std::string& title);

// A general line chart (e.g. `draplane bench --scale`'s per-pod cost against
// cluster size): one solid line per series, x on a log10 scale when log_x.
struct Chart {
  struct Series {
    std::string name;
    std::vector<std::pair<double, double>> points;  // (x, y), x > 0 with log_x
  };
  std::string title, x_label, y_label;
  bool log_x = false;
  std::vector<Series> series;
};
void draw_chart(Canvas& canvas, const Chart& chart);
std::string chart_svg(const Chart& chart);
// As write_curves_png, for a Chart.
Result<void> write_chart_png(const Chart& chart, const std::string& path);

// Whether this build can write PNG (cairo was found at configure time).
bool png_supported();
// Writes the figure as a kPlotWidth x kPlotHeight PNG; kInvalid naming the
// file when it cannot be written, kFailedPrecondition in a build without cairo.
Result<void> write_curves_png(const std::vector<FillResult>& runs, const std::string& title, const std::string& path);

}  // namespace draplane::sim
