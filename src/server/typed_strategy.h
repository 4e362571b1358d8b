// The strategy of the kinds draplane models as types (api/codec.h): a body is
// decoded (strict under fieldValidation=Strict, else unknown and duplicate
// fields dropped), defaulted (api/defaults.h), validated as kube-apiserver
// validates it (api/validation.h, CEL selectors compiled with the server's
// program cache) and re-encoded canonically.
#pragma once

#include "api/codec.h"
#include "api/validation.h"
#include "server/strategy.h"

namespace draplane::server {

class TypedStrategy : public Strategy {
 public:
  std::optional<ApiError> validate_create(const StrategyContext& c, Json& object,
                                          std::vector<std::string>& warnings) const override;
  std::optional<ApiError> validate_update(const StrategyContext& c, const JsonValue& old, Json& object,
                                          const std::string& subresource,
                                          std::vector<std::string>& warnings) const override;
  void apply_defaults(const StrategyContext& c, Json& object) const override;

 protected:
  // PrepareForUpdate of the decoded, defaulted object (`subresource` "status" for
  // /status writes): what the server sets from the old object. Nothing by default.
  virtual void prepare_typed_update(const StrategyContext& c, const api::Object& old, api::Object& object,
                                    const std::string& subresource) const {}
  // ValidateUpdate of the decoded objects (api::validate_update unless a kind's differs).
  virtual api::FieldErrorList validate_typed_update(const StrategyContext& c, const api::Object& old,
                                                    const api::Object& object, const std::string& subresource) const;
  // Validation with the context's CEL program cache.
  static api::ValidationOptions validation_options(const StrategyContext& c);
  // `object` as a typed object of `r` under the context's field validation.
  static Result<api::Object> decode_body(const StrategyContext& c, const JsonValue& object,
                                         std::vector<std::string>& warnings);
};

}  // namespace draplane::server
