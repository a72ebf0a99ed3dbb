// The one list of functions `/v1/query` may call. DuckDB's parser turns operators and special syntax
// into function calls (`a + b` is `+`, `LIKE` is `~~`, `INTERVAL 1 DAY` is `to_days`, `[1, 2]` is
// `list_value`, `{'a': 1}` is `struct_pack`), so they are listed here too. Everything is read-only
// and pure: no file, network, catalog, setting, sequence, variable or sleep access. Names are matched
// lower-cased. A test checks every name below exists in `duckdb_functions()` (or is an operator the
// parser emits), so a typo cannot silently widen or narrow the list.

const OPERATORS = [
  '+', '-', '*', '/', '//', '%', '**', '^', '@', '!__postfix',
  '<<', '>>', '&', '|', '~', 'xor',
  '||',
  '~~', '!~~', '~~*', '!~~*', '~~~', '!~~~', // LIKE, NOT LIKE, ILIKE, NOT ILIKE, GLOB, NOT GLOB
  '^@', // starts_with
  '@>', '<@', '&&', // list/array containment and overlap
  '->>', // JSON extraction as text ('->' parses as a LAMBDA node, which DuckDB binds as json_extract on JSON input)
  '<->', '<=>', // list/array distance operators
];

const ARITHMETIC = [
  'abs', 'acos', 'acosh', 'add', 'asin', 'asinh', 'atan', 'atan2', 'atanh', 'bit_count', 'cbrt', 'ceil',
  'ceiling', 'cos', 'cosh', 'cot', 'degrees', 'divide', 'even', 'exp', 'factorial', 'fdiv', 'floor', 'fmod',
  'gamma', 'gcd', 'greatest_common_divisor', 'isfinite', 'isinf', 'isnan', 'lcm', 'least_common_multiple',
  'lgamma', 'ln', 'log', 'log10', 'log2', 'mod', 'multiply', 'nextafter', 'pi', 'pow', 'power', 'radians',
  'round', 'round_even', 'roundbankers', 'sign', 'signbit', 'sin', 'sinh', 'sqrt', 'subtract', 'tan', 'tanh',
  'trunc', 'random', 'equi_width_bins', 'bar',
];

const CONDITIONAL = ['coalesce', 'ifnull', 'nullif', 'greatest', 'least', 'if', 'typeof', 'constant_or_null'];

const STRING = [
  'ascii', 'base64', 'bin', 'bit_length', 'char_length', 'character_length', 'chr', 'concat', 'concat_ws',
  'contains', 'damerau_levenshtein', 'editdist3', 'ends_with', 'format', 'format_bytes', 'formatreadabledecimalsize',
  'formatreadablesize', 'from_base64', 'from_binary', 'from_hex', 'hamming', 'hex', 'ilike_escape', 'instr',
  'jaccard', 'jaro_similarity', 'jaro_winkler_similarity', 'lcase', 'left', 'left_grapheme', 'len', 'length',
  'length_grapheme', 'levenshtein', 'like_escape', 'lower', 'lpad', 'ltrim', 'mismatches', 'nfc_normalize',
  'not_ilike_escape', 'not_like_escape', 'octet_length', 'ord', 'parse_dirname', 'parse_dirpath',
  'parse_filename', 'parse_path', 'parse_formatted_bytes', 'position', 'prefix', 'printf', 'repeat', 'replace',
  'reverse', 'right', 'right_grapheme', 'rpad', 'rtrim', 'split', 'split_part', 'starts_with', 'str_split',
  'str_split_regex', 'string_split', 'string_split_regex', 'string_to_array', 'strip_accents', 'strlen',
  'strpos', 'substr', 'substring', 'substring_grapheme', 'suffix', 'to_base', 'to_base64', 'to_binary',
  'to_hex', 'translate', 'trim', 'ucase', 'unbin', 'unhex', 'unicode', 'upper', 'url_decode', 'url_encode',
  'encode', 'decode', 'get_bit', 'bit_position',
];

const REGEX = [
  'regexp_escape', 'regexp_extract', 'regexp_extract_all', 'regexp_full_match', 'regexp_matches',
  'regexp_replace', 'regexp_split_to_array',
];

const HASH = ['hash', 'md5', 'md5_number', 'md5_number_lower', 'md5_number_upper', 'sha1', 'sha256', 'uuid', 'gen_random_uuid', 'uuidv4', 'uuidv7', 'uuid_extract_timestamp', 'uuid_extract_version'];

const DATETIME = [
  'age', 'century', 'current_date', 'current_localtime', 'current_localtimestamp', 'date_add', 'date_diff',
  'date_part', 'date_sub', 'date_trunc', 'datediff', 'datepart', 'datesub', 'datetrunc', 'day', 'dayname',
  'dayofmonth', 'dayofweek', 'dayofyear', 'days_in_month', 'decade', 'epoch', 'epoch_ms', 'epoch_ns',
  'epoch_us', 'era', 'get_current_time', 'get_current_timestamp', 'hour', 'isodow', 'isoyear', 'julian',
  'last_day', 'make_date', 'make_time', 'make_timestamp', 'make_timestamp_ms', 'make_timestamp_ns',
  'make_timestamptz', 'microsecond', 'millennium', 'millisecond', 'minute', 'month', 'monthname',
  'nanosecond', 'normalized_interval', 'now', 'quarter', 'second', 'strftime', 'strptime', 'time_bucket',
  'timezone', 'timezone_hour', 'timezone_minute', 'to_centuries', 'to_days', 'to_decades', 'to_hours',
  'to_microseconds', 'to_millennia', 'to_milliseconds', 'to_minutes', 'to_months', 'to_quarters',
  'to_seconds', 'to_timestamp', 'to_weeks', 'to_years', 'today', 'transaction_timestamp', 'try_strptime',
  'week', 'weekday', 'weekofyear', 'year', 'yearweek', 'ago',
];

const JSON_FNS = [
  'json', 'json_array', 'json_array_length', 'json_contains', 'json_exists', 'json_extract',
  'json_extract_path', 'json_extract_path_text', 'json_extract_string', 'json_keys', 'json_merge_patch',
  'json_object', 'json_pretty', 'json_quote', 'json_structure', 'json_transform', 'json_transform_strict',
  'json_type', 'json_valid', 'json_value', 'from_json', 'from_json_strict', 'to_json', 'array_to_json',
  'row_to_json', 'json_group_array', 'json_group_object', 'json_group_structure',
];

const LIST = [
  'aggregate', 'apply', 'array_aggr', 'array_aggregate', 'array_append', 'array_apply', 'array_cat',
  'array_concat', 'array_contains', 'array_cosine_distance', 'array_cosine_similarity', 'array_cross_product',
  'array_distance', 'array_distinct', 'array_dot_product', 'array_extract', 'array_filter', 'array_grade_up',
  'array_has', 'array_has_all', 'array_has_any', 'array_indexof', 'array_inner_product', 'array_intersect',
  'array_length', 'array_negative_dot_product', 'array_negative_inner_product', 'array_pop_back',
  'array_pop_front', 'array_position', 'array_prepend', 'array_push_back', 'array_push_front', 'array_reduce',
  'array_resize', 'array_reverse', 'array_reverse_sort', 'array_select', 'array_slice', 'array_sort',
  'array_to_string', 'array_to_string_comma_default', 'array_transform', 'array_unique', 'array_value',
  'array_where', 'array_zip', 'cardinality', 'element_at', 'filter', 'flatten', 'generate_series',
  'generate_subscripts', 'grade_up', 'list_aggr', 'list_aggregate', 'list_any_value', 'list_append', 'list_apply',
  'list_approx_count_distinct', 'list_avg', 'list_bit_and', 'list_bit_or', 'list_bit_xor', 'list_bool_and',
  'list_bool_or', 'list_cat', 'list_concat', 'list_contains', 'list_cosine_distance', 'list_cosine_similarity',
  'list_count', 'list_distance', 'list_distinct', 'list_dot_product', 'list_element', 'list_entropy',
  'list_extract', 'list_filter', 'list_first', 'list_grade_up', 'list_has', 'list_has_all', 'list_has_any',
  'list_histogram', 'list_indexof', 'list_inner_product', 'list_intersect', 'list_kurtosis',
  'list_kurtosis_pop', 'list_last', 'list_mad', 'list_max', 'list_median', 'list_min', 'list_mode',
  'list_negative_dot_product', 'list_negative_inner_product', 'list_pack', 'list_position', 'list_prepend',
  'list_product', 'list_reduce', 'list_resize', 'list_reverse', 'list_reverse_sort', 'list_select', 'list_sem',
  'list_skewness', 'list_slice', 'list_sort', 'list_stddev_pop', 'list_stddev_samp', 'list_string_agg',
  'list_sum', 'list_transform', 'list_unique', 'list_value', 'list_var_pop', 'list_var_samp', 'list_where',
  'list_zip', 'range', 'reduce', 'unnest', 'unpivot_list',
];

const STRUCT_MAP = [
  'map', 'map_concat', 'map_contains', 'map_contains_entry', 'map_contains_value', 'map_entries', 'map_extract',
  'map_extract_value', 'map_from_entries', 'map_keys', 'map_values', 'row', 'struct_concat', 'struct_contains',
  'struct_extract', 'struct_extract_at', 'struct_has', 'struct_indexof', 'struct_insert', 'struct_keys',
  'struct_pack', 'struct_position', 'struct_update', 'struct_values', 'union_extract', 'union_tag',
  'union_value',
];

const AGGREGATE = [
  'any_value', 'approx_count_distinct', 'approx_quantile', 'approx_top_k', 'arbitrary', 'arg_max',
  'arg_max_null', 'arg_max_nulls_last', 'arg_min', 'arg_min_null', 'arg_min_nulls_last', 'argmax', 'argmin',
  'array_agg', 'avg', 'bit_and', 'bit_or', 'bit_xor', 'bool_and', 'bool_or', 'corr', 'count', 'count_if',
  'count_star', 'countif', 'covar_pop', 'covar_samp', 'entropy', 'favg', 'first', 'fsum', 'geomean',
  'geometric_mean', 'group_concat', 'histogram', 'histogram_exact', 'kahan_sum', 'kurtosis', 'kurtosis_pop',
  'last', 'list', 'listagg', 'mad', 'max', 'max_by', 'mean', 'median', 'min', 'min_by', 'mode', 'product',
  'quantile', 'quantile_cont', 'quantile_disc', 'regr_avgx', 'regr_avgy', 'regr_count', 'regr_intercept',
  'regr_r2', 'regr_slope', 'regr_sxx', 'regr_sxy', 'regr_syy', 'reservoir_quantile', 'sem', 'skewness',
  'stddev', 'stddev_pop', 'stddev_samp', 'string_agg', 'sum', 'sum_no_overflow', 'sumkahan', 'var_pop',
  'var_samp', 'variance', 'wavg', 'weighted_avg', 'is_histogram_other_bin',
];

const WINDOW = [
  'cume_dist', 'dense_rank', 'fill', 'first_value', 'lag', 'last_value', 'lead', 'nth_value', 'ntile',
  'percent_rank', 'rank', 'rank_dense', 'row_number',
];

/** Scalar, aggregate and window functions (and operators) a query may call anywhere in an expression. */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set(
  [OPERATORS, ARITHMETIC, CONDITIONAL, STRING, REGEX, HASH, DATETIME, JSON_FNS, LIST, STRUCT_MAP, AGGREGATE, WINDOW].flat(),
);

/**
 * Table functions a query may put in FROM. Decision: only these five, which compute rows from their
 * arguments and touch no file, catalog or setting: `range`/`generate_series` (number and time
 * sequences, e.g. to fill empty 5-minute buckets), `unnest` (a list to rows) and `json_each`/`json_tree`
 * (attribute JSON to rows). Every other table function (read_*, glob, parquet_*, query, query_table,
 * duckdb_*, pragma_*, sniff_csv, json_execute_serialized_sql, ...) is refused. A runaway `range` is
 * bounded by the time limit like any other slow query.
 */
export const ALLOWED_TABLE_FUNCTIONS: ReadonlySet<string> = new Set(['range', 'generate_series', 'unnest', 'json_each', 'json_tree']);

/** Operator-like names the parser emits that are not rows of duckdb_functions() (checked by a test). */
export const PARSER_ONLY_NAMES: ReadonlySet<string> = new Set(['if', 'coalesce', 'ifnull', '!~~~', 'row', 'current_date']);
