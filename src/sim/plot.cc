#include "sim/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace draplane::sim {
namespace {

constexpr double kLeft = 60, kRight = 170, kTop = 40, kBottom = 50;  // margins; legend on the right
constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                                   "#7f7f7f", "#bcbd22", "#17becf"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// Mean over a policy's runs of each curve point, by arrived percent.
struct MeanCurve {
  std::string policy;
  std::map<int, std::pair<double, double>> points;  // pct -> (allocated, fragmented), fractions
};

std::vector<MeanCurve> mean_curves(const std::vector<FillResult>& runs) {
  std::vector<MeanCurve> out;
  std::map<std::string, size_t> index;
  std::vector<std::map<int, int>> counts;
  for (const auto& r : runs) {
    auto [it, added] = index.try_emplace(r.policy, out.size());
    if (added) {
      out.push_back(MeanCurve{r.policy, {}});
      counts.emplace_back();
    }
    for (const auto& p : r.curve) {
      auto& slot = out[it->second].points[p.arrived_pct];
      slot.first += p.allocated;
      slot.second += p.fragmented;
      ++counts[it->second][p.arrived_pct];
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    for (auto& [pct, v] : out[i].points) {
      v.first /= counts[i][pct];
      v.second /= counts[i][pct];
    }
  }
  return out;
}

class SvgCanvas : public Canvas {
 public:
  SvgCanvas() {
    svg_ = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
        "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
        kPlotWidth, kPlotHeight, kPlotWidth, kPlotHeight);
  }
  void line(double x1, double y1, double x2, double y2, const char* color, double width) override {
    svg_ += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"{}/>\n", x1, y1, x2,
                        y2, color, width == 1 ? "" : fmt::format(" stroke-width=\"{}\"", width));
  }
  void frame(double x, double y, double w, double h) override {
    svg_ += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"black\"/>\n",
                        x, y, w, h);
  }
  void curve(const std::vector<std::pair<double, double>>& points, const char* color, bool dashed,
             const std::string& policy) override {
    std::string joined;
    for (const auto& [x, y] : points) joined += fmt::format("{:.1f},{:.1f} ", x, y);
    svg_ += fmt::format("<polyline class=\"{}\" data-policy=\"{}\" fill=\"none\" stroke=\"{}\" {}points=\"{}\"/>\n",
                        dashed ? "fragmented" : "allocated", escape(policy), color,
                        dashed ? "stroke-dasharray=\"4 3\" " : "stroke-width=\"1.8\" ", joined);
  }
  void text(double x, double y, const std::string& s, TextAlign align, double size, bool vertical) override {
    const char* anchor = align == TextAlign::kStart ? "" : align == TextAlign::kMiddle ? " text-anchor=\"middle\"" : " text-anchor=\"end\"";
    std::string font = size == 12 ? "" : fmt::format(" font-size=\"{}\"", size);
    if (vertical) {
      svg_ += fmt::format("<text transform=\"translate({:.1f} {:.1f}) rotate(-90)\"{}{}>{}</text>\n", x, y, anchor, font,
                          escape(s));
    } else {
      svg_ += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}{}>{}</text>\n", x, y, anchor, font, escape(s));
    }
  }
  std::string finish() { return svg_ + "</svg>\n"; }

 private:
  std::string svg_;
};

}  // namespace

void draw_curves(Canvas& canvas, const std::vector<FillResult>& runs, const std::string& title) {
  auto curves = mean_curves(runs);
  int max_pct = 100;
  for (const auto& c : curves) {
    if (!c.points.empty()) max_pct = std::max(max_pct, c.points.rbegin()->first);
  }
  max_pct = (max_pct + 9) / 10 * 10;
  double plot_w = kPlotWidth - kLeft - kRight, plot_h = kPlotHeight - kTop - kBottom;
  auto x = [&](double pct) { return kLeft + plot_w * pct / max_pct; };
  auto y = [&](double percent) { return kTop + plot_h * (1 - percent / 100); };

  canvas.text(kLeft + plot_w / 2, 22, title, TextAlign::kMiddle, 14, false);
  // Grid and axis labels every 10%.
  for (int v = 0; v <= 100; v += 10) {
    canvas.line(x(0), y(v), x(max_pct), y(v), "#dddddd", 1);
    canvas.text(x(0) - 6, y(v) + 4, std::to_string(v), TextAlign::kEnd, 12, false);
  }
  for (int p = 0; p <= max_pct; p += 10) {
    canvas.line(x(p), y(0), x(p), y(100), "#dddddd", 1);
    canvas.text(x(p), y(0) + 16, std::to_string(p), TextAlign::kMiddle, 12, false);
  }
  canvas.frame(kLeft, kTop, plot_w, plot_h);
  canvas.text(kLeft + plot_w / 2, kPlotHeight - 12, "Arrived workload (% of GPU capacity)", TextAlign::kMiddle, 12, false);
  canvas.text(16, kTop + plot_h / 2, "GPU allocated (solid) / fragmented (dashed), %", TextAlign::kMiddle, 12, true);
  for (size_t i = 0; i < curves.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    std::vector<std::pair<double, double>> allocated, fragmented;
    for (const auto& [pct, v] : curves[i].points) {
      allocated.emplace_back(x(pct), y(100 * v.first));
      fragmented.emplace_back(x(pct), y(100 * v.second));
    }
    canvas.curve(allocated, color, false, curves[i].policy);
    canvas.curve(fragmented, color, true, curves[i].policy);
    double ly = kTop + 14 + 18.0 * static_cast<double>(i);
    canvas.line(kPlotWidth - kRight + 14, ly, kPlotWidth - kRight + 38, ly, color, 2);
    canvas.text(kPlotWidth - kRight + 44, ly + 4, curves[i].policy, TextAlign::kStart, 12, false);
  }
}

void draw_chart(Canvas& canvas, const Chart& chart) {
  double x_min = 0, x_max = 1, y_max = 0;
  bool first = true;
  auto tx = [&](double v) { return chart.log_x ? std::log10(std::max(v, 1e-12)) : v; };
  for (const auto& s : chart.series) {
    for (const auto& [px, py] : s.points) {
      x_min = first ? tx(px) : std::min(x_min, tx(px));
      x_max = first ? tx(px) : std::max(x_max, tx(px));
      y_max = std::max(y_max, py);
      first = false;
    }
  }
  if (chart.log_x) {
    x_min = std::floor(x_min);
    x_max = std::max(std::ceil(x_max), x_min + 1);
  } else {
    x_min = 0;
    if (x_max <= 0) x_max = 1;
  }
  // y from 0 to a round top: 1, 2 or 5 times a power of ten, 5 steps or fewer.
  double step = std::pow(10, std::floor(std::log10(y_max > 0 ? y_max / 5 : 1)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (y_max / (step * m) <= 5) {
      step *= m;
      break;
    }
  }
  const double y_top = std::max(step, std::ceil(y_max / step) * step);
  const double plot_w = kPlotWidth - kLeft - kRight, plot_h = kPlotHeight - kTop - kBottom;
  auto x = [&](double v) { return kLeft + plot_w * (tx(v) - x_min) / (x_max - x_min); };
  auto y = [&](double v) { return kTop + plot_h * (1 - v / y_top); };

  canvas.text(kLeft + plot_w / 2, 22, chart.title, TextAlign::kMiddle, 14, false);
  for (double v = 0; v <= y_top + step / 2; v += step) {
    canvas.line(kLeft, y(v), kLeft + plot_w, y(v), "#dddddd", 1);
    canvas.text(kLeft - 6, y(v) + 4, fmt::format("{:g}", v), TextAlign::kEnd, 12, false);
  }
  if (chart.log_x) {
    for (double e = x_min; e <= x_max + 1e-9; e += 1) {
      double px = kLeft + plot_w * (e - x_min) / (x_max - x_min);
      canvas.line(px, y(0), px, y(y_top), "#dddddd", 1);
      canvas.text(px, y(0) + 16, fmt::format("{:g}", std::pow(10, e)), TextAlign::kMiddle, 12, false);
    }
  }
  canvas.frame(kLeft, kTop, plot_w, plot_h);
  canvas.text(kLeft + plot_w / 2, kPlotHeight - 12, chart.x_label, TextAlign::kMiddle, 12, false);
  canvas.text(16, kTop + plot_h / 2, chart.y_label, TextAlign::kMiddle, 12, true);
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    std::vector<std::pair<double, double>> pts;
    for (const auto& [px, py] : chart.series[i].points) pts.emplace_back(x(px), y(py));
    canvas.curve(pts, color, false, chart.series[i].name);
    for (const auto& [px, py] : pts) canvas.line(px - 3, py, px + 3, py, color, 2);  // marks the measured points
    double ly = kTop + 14 + 18.0 * static_cast<double>(i);
    canvas.line(kPlotWidth - kRight + 14, ly, kPlotWidth - kRight + 38, ly, color, 2);
    canvas.text(kPlotWidth - kRight + 44, ly + 4, chart.series[i].name, TextAlign::kStart, 12, false);
  }
}

std::string chart_svg(const Chart& chart) {
  SvgCanvas canvas;
  draw_chart(canvas, chart);
  return canvas.finish();
}

std::string curves_svg(const std::vector<FillResult>& runs, const std::string& title) {
  SvgCanvas canvas;
  draw_curves(canvas, runs, title);
  return canvas.finish();
}

}  // namespace draplane::sim
