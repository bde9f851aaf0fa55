"""Which words are terms of their own, and which say nothing, in both languages.

* **Protected terms** are English words the stemmer must leave alone, because its stem
  would merge them with ordinary words of another meaning: ``transformer`` is not
  ``transform`` (image augmentation), ``tokenizer`` not ``token``, ``paged`` not
  ``page`` (``408-page``), ``GPUs`` is the plural of ``GPU``. A protected word only
  loses a plural ``s``/``es``. The set is :data:`TECH_TERMS` plus every topic name of
  the vault that is one word and that the stemmer would cut into another word's stem
  (``Transformer``, ``Quantization``; ``Decoding`` only loses an ending and still meets
  ``decode``); names of several words are matched as phrases instead
  (:mod:`studykb.search.understand`).
* **Stop words** are function words of both languages (的, 为什么, how): they count little
  in a query. **Filler** is what notes and course pages say about everything (``内容``,
  ``笔记``, ``动态``, ``page``, ``course``, ``fall``): with the stop words it is never a
  reason for related documents and carries no weight in their text vectors.

A vault's protected set is carried by the :class:`studykb.text.analysis.Analyser` its
topic table gives (:meth:`studykb.vault.topics.TopicTable.analyser`), never set for the
process; :func:`affected_terms` says which index terms change when it changes, so only
the documents holding them are read again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

#: Technical words whose Porter stem collides with an everyday word of another meaning.
TECH_TERMS = frozenset(
    (
        "transformer",
        "tokenizer",
        "tokenization",
        "paged",
        "paging",
        "operator",
        "activation",
        "precision",
        "optimizer",
        "embedding",
        "collective",
        "deterministic",
        "determinism",
        "gpu",
        "cpu",
        "tpu",
        "npu",
        "positional",
    )
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: English function words: count little in a query, never a subject.
EN_STOP = _words("""
a about above after again against all also am an and any are as at be because been
before being below between both but by can could did do does doing down during each etc
few for from further had has have having he her here hers him his how i if in into is it
its itself just let like many may me more most much must my no nor not now of off on
once one only or other our ours out over own per same see she should since so some such
than that the their them then there these they this those through thus to too two under
until up upon us use used uses using very via was we well were what when where which
while who whom why will with would yet you your e.g i.e vs
""")

#: English words of notes and course pages that are no subject either (never a reason for
#: related documents, never weight in their text vectors; a query may still ask for them).
EN_FILLER = _words("""
tbd todo note notes page pages section chapter example examples figure table part read
reading first second new way ways thing things lot lots get gets got make makes made need
needs want wants good better best really course courses topic topics lecture lectures
digest news update updates post posts blog article articles video videos slides link
links recorded recording teaches taught week weeks day days year years today monday
mondays tuesday tuesdays wednesday wednesdays thursday thursdays friday fridays saturday
sunday fall spring summer winter autumn january february march april june july august
september october november december max min basic basics modern pro introduction intro
overview guide guides tutorial tutorials official docs paper papers series session
sessions part parts means
""")

#: Chinese function words (indexed, since phrases need them; worth little in a query).
ZH_STOP = _words("""
的 了 是 在 和 与 也 就 都 而 及 或 一个 我们 你 我 他 她 它 这 那 这个 那个 个 上 下 中 为
对 把 被 让 会 能 可以 没有 不 有 就是 还 但 并 等 以 于 之 其 时 后 前 要 所以 因为 如果 一
二 两 多 很 更 最 再 又 才 从 到 由 用 做 来 去 说 看 里 吗 呢 吧 啊 着 过 得 地 每 各 所 该
此 如 即 则 将 已 已经 一些 这些 那些 什么 怎么 如何 通过 进行 使用 之后 之前 然后 以及 但是
而且 或者 一样 一次 一般 这是 那是 这里 那里 这样 那样 这种 那种 为什么 怎样 哪些 哪个 可能
需要 应该 其中 比如 例如 包括 就是说 也就是 还是 而是 不是 只是 非常 比较 一下 一点 里面 之间
以上 以下 下面 上面 我的 自己 大家 第一 第二 能够
""")

#: Chinese filler of notes (这是, 内容, 笔记): no subject.
ZH_FILLER = _words("""
内容 笔记 本文 文章 一篇 部分 介绍 相关 方面 问题 东西 时候 主要 动态 汇总 记录 等待 降到
有无 课程 讲座 视频 博客 新闻 总结 摘要 中文 英文 原文 链接 更新 发布 学习 起来 得到 时间
""")


def one_word_names(names: Iterable[str]) -> frozenset[str]:
    """The names that are one plain English word the stemmer would turn into another
    word's stem, lowercased (``Transformer``, ``Quantization``; not ``Decoding``, whose
    stem only drops an ending, so ``decode`` still finds it)."""
    # deferred: the stemmer loads only when text is analysed
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    out = set()
    for name in names:
        word = name.strip().lower()
        if (
            word.isascii()
            and word.isalpha()
            and 1 < len(word) <= 40
            and not _inflected(word, stemmer.stemWord(word))
        ):
            out.add(word)
    return frozenset(out)


#: Endings whose removal leaves the same word (decod+ing, tensor+s, memor+y).
INFLECTIONS = ("", "s", "es", "e", "ed", "d", "ing", "ly", "y")


def _inflected(word: str, stem: str) -> bool:
    """Whether the stemmer only removed an inflection from ``word`` (or nothing)."""
    if stem.endswith("i") and word.endswith("y"):
        stem, word = stem[:-1], word[:-1]
    return word.startswith(stem) and word[len(stem) :] in INFLECTIONS


def light_stem(word: str, words: frozenset[str]) -> str | None:
    """``word`` (lowercased) as a term protected in ``words``: itself, or without a plural
    ``s``/``es`` when that is protected; None when it is not a protected word."""
    if word in words:
        return word
    if word.endswith("s"):
        if word[:-1] in words:
            return word[:-1]
        if word.endswith("es") and word[:-2] in words:
            return word[:-2]
    return None


def digest(words: frozenset[str]) -> str:
    """A short fingerprint of a protected set."""
    return hashlib.blake2b("\0".join(sorted(words)).encode(), digest_size=8).hexdigest()


def affected_terms(old: Iterable[str], new: Iterable[str]) -> set[str]:
    """Index terms whose documents read differently when the protected set goes from
    ``old`` to ``new``: for each word protected in one and not the other, its stem and
    its plural's stem, and the word itself."""
    # deferred: the stemmer loads only when text is analysed
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    changed = set(old) ^ set(new)
    out: set[str] = set()
    for word in changed:
        out.update(
            (
                word,
                stemmer.stemWord(word),
                stemmer.stemWord(word + "s"),
                stemmer.stemWord(word + "es"),
            )
        )
    return out


def is_stop(term: str) -> bool:
    """Whether a term (as analysed, or as written) is a function word of either language."""
    return term in ZH_STOP or term.lower() in EN_STOP


def is_filler(term: str) -> bool:
    """Whether a term says nothing about a subject: a function word or note filler."""
    return is_stop(term) or term in ZH_FILLER or term.lower() in EN_FILLER
