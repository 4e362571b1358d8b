#include "sim/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace draplane::sim {
namespace {

constexpr double kWidth = 720, kHeight = 480;
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

}  // namespace

std::string curves_svg(const std::vector<FillResult>& runs, const std::string& title) {
  auto curves = mean_curves(runs);
  int max_pct = 100;
  for (const auto& c : curves) {
    if (!c.points.empty()) max_pct = std::max(max_pct, c.points.rbegin()->first);
  }
  max_pct = (max_pct + 9) / 10 * 10;
  double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto x = [&](double pct) { return kLeft + plot_w * pct / max_pct; };
  auto y = [&](double percent) { return kTop + plot_h * (1 - percent / 100); };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      kWidth, kHeight, kWidth, kHeight);
  svg += fmt::format("<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n",
                     kLeft + plot_w / 2, escape(title));
  // Grid and axis labels every 10%.
  for (int v = 0; v <= 100; v += 10) {
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", x(0), y(v),
                       x(max_pct), y(v));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", x(0) - 6, y(v) + 4, v);
  }
  for (int p = 0; p <= max_pct; p += 10) {
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", x(p), y(0),
                       x(p), y(100));
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", x(p), y(0) + 16, p);
  }
  svg += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"black\"/>\n",
                     kLeft, kTop, plot_w, plot_h);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">Arrived workload (% of GPU capacity)</text>\n",
                     kLeft + plot_w / 2, kHeight - 12);
  svg += fmt::format("<text transform=\"translate(16 {:.1f}) rotate(-90)\" text-anchor=\"middle\">GPU allocated "
                     "(solid) / fragmented (dashed), %</text>\n",
                     kTop + plot_h / 2);
  for (size_t i = 0; i < curves.size(); ++i) {
    const char* color = kColors[i % std::size(kColors)];
    std::string allocated, fragmented;
    for (const auto& [pct, v] : curves[i].points) {
      allocated += fmt::format("{:.1f},{:.1f} ", x(pct), y(100 * v.first));
      fragmented += fmt::format("{:.1f},{:.1f} ", x(pct), y(100 * v.second));
    }
    svg += fmt::format("<polyline class=\"allocated\" data-policy=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" "
                       "points=\"{}\"/>\n",
                       escape(curves[i].policy), color, allocated);
    svg += fmt::format("<polyline class=\"fragmented\" data-policy=\"{}\" fill=\"none\" stroke=\"{}\" "
                       "stroke-dasharray=\"4 3\" points=\"{}\"/>\n",
                       escape(curves[i].policy), color, fragmented);
    double ly = kTop + 14 + 18.0 * static_cast<double>(i);
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"/>\n",
                       kWidth - kRight + 14, ly, kWidth - kRight + 38, ly, color);
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", kWidth - kRight + 44, ly + 4,
                       escape(curves[i].policy));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace draplane::sim
