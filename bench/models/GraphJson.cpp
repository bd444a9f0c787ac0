#include <nlohmann/json.hpp>

#include "bench/models/Layers.h"

namespace tessera::models {

namespace {

nlohmann::json attr_json(const OpAttr &attr) {
  return std::visit([](const auto &v) { return nlohmann::json(v); }, attr);
}

nlohmann::json tensor_json(const std::string &name, DType dtype,
                           const std::vector<int64_t> &shape) {
  return {{"name", name}, {"dtype", std::string(tile::dtype_name(dtype))}, {"shape", shape}};
}

}  // namespace

std::string graph_json(const std::string &model, const ModelOptions &options, double flops,
                       const Tensor &input, const std::vector<Weight> &weights,
                       const std::vector<GraphNode> &nodes) {
  nlohmann::json x = tensor_json("X", input.dtype(), input.shape());
  if (input.rank() == 4) x["layout"] = "NHWC";
  nlohmann::json weight_list = nlohmann::json::array();
  for (const Weight &w : weights)
    weight_list.push_back(tensor_json(w.placeholder.name(), w.value.dtype(), w.value.shape()));
  nlohmann::json node_list = nlohmann::json::array();
  for (const GraphNode &node : nodes) {
    nlohmann::json attrs = nlohmann::json::object();
    for (const auto &[name, value] : node.attrs) attrs[name] = attr_json(value);
    node_list.push_back(
        {{"op", node.op}, {"inputs", node.inputs}, {"output", node.output}, {"attrs", attrs}});
  }
  nlohmann::json graph = {{"model", model},
                          {"batch", options.batch},
                          {"flops", flops},
                          {"inputs", nlohmann::json::array({x})},
                          {"outputs", nlohmann::json::array({"Y"})},
                          {"weights", weight_list},
                          {"nodes", node_list}};
  return graph.dump();
}

}  // namespace tessera::models
