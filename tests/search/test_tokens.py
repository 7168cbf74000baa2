"""The terms of a text: width and case folded, CJK cut into bigrams, other scripts into words, code,
math and URLs as their words, HTML tags left out."""

from __future__ import annotations

from function.search.lexical import distance, idf, indexed_document
from function.search.tokens import MAX_TERM_CHARS, query_terms, terms


def test_latin_words_are_case_folded_and_split_at_punctuation() -> None:
    assert terms("Deploy the AWS_Lambda function, v2.0!") == [
        "deploy",
        "the",
        "aws",
        "lambda",
        "function",
        "v2",
        "0",
    ]


def test_full_width_and_half_width_forms_are_the_ordinary_ones() -> None:
    full_width_aws = "".join(chr(ord(c) + 0xFEE0) for c in "AWS")
    assert terms(full_width_aws) == ["aws"]
    assert terms("ｶﾀｶﾅ") == ["カタ", "タカ", "カナ"]  # half-width katakana


def test_japanese_is_cut_into_overlapping_bigrams_between_latin_words() -> None:
    assert terms("AWSのLambda関数") == ["aws", "の", "lambda", "関数"]
    assert terms("東京タワー") == ["東京", "京タ", "タワ", "ワー"]
    assert terms("한국어") == ["한국", "국어"]


def test_code_urls_and_math_are_indexed_as_their_words() -> None:
    assert terms("`client = boto3.client('lambda')`") == ["client", "boto3", "client", "lambda"]
    assert terms("https://docs.aws.amazon.com/lambda/") == ["https", "docs", "aws", "amazon", "com", "lambda"]
    assert terms("$d = 1 - \\cos\\theta$") == ["d", "1", "cos", "theta"]


def test_html_tags_are_left_out_but_their_text_kept() -> None:
    assert terms('<details class="note"><summary>要約</summary>本文</details>') == ["要約", "本文"]


def test_a_very_long_word_is_cut() -> None:
    assert terms("x" * 200) == ["x" * MAX_TERM_CHARS]


def test_query_terms_are_distinct_in_order_and_bounded() -> None:
    assert query_terms("lambda Lambda LAMBDA 関数", limit=10) == ["lambda", "関数"]
    assert query_terms("a b c d", limit=2) == ["a", "b"]


def test_title_and_tags_weigh_three_times_the_body_and_the_description_twice() -> None:
    document = indexed_document("Lambda", ["tech/aws"], "Lambda notes", "lambda body")
    assert document.frequencies["lambda"] == 3 + 2 + 1
    assert document.frequencies["aws"] == 3
    assert document.length == 1 * 3 + 2 * 3 + 2 * 2 + 2 * 1


def test_distance_falls_as_the_score_rises_and_rarer_terms_weigh_more() -> None:
    assert distance(0.0) == 1.0
    assert distance(0.5) > distance(2.0) > distance(10.0) > 0
    assert idf(1000, 1) > idf(1000, 100) > idf(1000, 1000) > 0
