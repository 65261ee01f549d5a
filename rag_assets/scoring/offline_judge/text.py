"""Reading text the same way everywhere: normalisation, content words, quantities, identifiers, names.

Normalisation: "single sign-on" -> "sso", "up to" -> "maximum", number words -> digits, "1,200" -> "1200",
"15GB" -> "15 GB", "an hour" -> "1 hour". Content words: stopwords out, light suffix stripping cut to six
letters, a few synonyms ("biggest" -> "maximum", "computer" -> "device"). Quantities: a number with its unit
(durations in seconds, so "60 minutes" == "1 hour"; prices, sizes, percentages, dates, product versions kept
apart) and the words around it (its role). Specific tokens: code, paths, flags, identifiers. Names:
capitalised words inside a sentence. Sentences: split at sentence ends, semicolons and citation markers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from rag_assets.text.tokens import STOPWORDS


_PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), r) for p, r in (
    (r"\bsingle[\s-]+sign[\s-]*on\b", "SSO"),
    (r"\b(?:multi|two|2)[\s-]*factor(?:\s+authentication)?\b", "MFA"),
    (r"\bsecond factor\b", "MFA"),
    (r"\bup to\b", "maximum"),
    (r"\bat most\b", "maximum"),
    (r"\bno more than\b", "maximum"),
    (r"\bat least\b", "minimum"),
    (r"\bno less than\b", "minimum"),
    (r"\b(?:sign|log)(?:s|ed|ing)?[\s-]+(?:in|on)\b", "signin"),
    (r"\blogin\b", "signin"),
    (r"\btime[\s-]+out\b", "timeout"),
    (r"\bper cent\b|\bpercent\b", "%"),
    (r"\b(?:an|a|one) (second|minute|hour|day|week|month|year)\b", r"1 \1"),
    (r"\bhalf an hour\b", "30 minutes"),
    (r"\b(?:every|each) (?:day|night)\b|\bnightly\b", "daily"),
))

_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
# Synonyms and irregular forms, mapped before suffix stripping (whole lowercase words).
_SYNONYMS = {
    "largest": "maximum", "biggest": "maximum", "max": "maximum", "highest": "maximum", "maximal": "maximum",
    "ceiling": "maximum", "limit": "maximum", "limits": "maximum", "cap": "maximum", "caps": "maximum",
    "capped": "maximum", "limited": "maximum", "smallest": "minimum", "lowest": "minimum", "min": "minimum",
    "cost": "price", "costs": "price", "priced": "price", "pricing": "price", "prices": "price", "fee": "price",
    "fees": "price", "charged": "price", "kept": "keep", "keeps": "keep", "keeping": "keep", "retain": "keep",
    "retains": "keep", "retained": "keep", "preserve": "keep", "preserved": "keep", "preserves": "keep",
    "hold": "keep", "holds": "keep", "held": "keep", "stored": "keep", "store": "keep", "stores": "keep",
    "removed": "remove", "removes": "remove", "removal": "remove", "dropped": "remove", "drop": "remove",
    "discontinued": "remove", "retired": "remove", "eliminated": "remove", "gone": "remove",
    "computer": "device", "computers": "device", "machine": "device", "machines": "device",
    "person": "user", "people": "user", "member": "user", "members": "user", "seat": "user", "seats": "user",
    "admin": "administrator", "admins": "administrator", "administrators": "administrator",
    "expiry": "expire", "expiration": "expire", "expires": "expire", "expired": "expire", "lapse": "expire",
    "lifetime": "expire", "valid": "expire",
    "need": "require", "needs": "require", "needed": "require", "required": "require", "requires": "require",
    "requirement": "require", "requirements": "require", "must": "require",
    "permitted": "allow", "permits": "allow", "allowed": "allow", "allows": "allow", "lets": "allow",
    "reattempt": "retry", "retried": "retry", "retries": "retry", "retrying": "retry",
    "calls": "request", "call": "request",
    "synchronisation": "sync", "synchronization": "sync", "synchronise": "sync", "synchronize": "sync",
    "synced": "sync", "syncs": "sync", "syncing": "sync", "became": "become", "becomes": "become",
    "raised": "increase", "raise": "increase", "increased": "increase", "higher": "increase",
    "bumped": "increase", "grew": "increase", "lowered": "decrease", "reduced": "decrease",
    "shortened": "decrease", "shorten": "decrease", "lower": "decrease", "reduce": "decrease",
    "encrypts": "encrypt", "encrypted": "encrypt", "encryption": "encrypt", "cipher": "encrypt",
    "ciphers": "encrypt", "enciphered": "encrypt",
    "gigabytes": "gb", "gigabyte": "gb", "terabytes": "tb", "terabyte": "tb", "megabytes": "mb",
    "megabyte": "mb", "kilobytes": "kb", "kilobyte": "kb",
    "secs": "second", "sec": "second", "mins": "minute", "hrs": "hour", "hr": "hour",
    "interval": "every", "frequency": "every", "often": "every",  # "how often": no checkable content
    "credentials": "credential", "passwords": "password",
    "deleted": "delete", "deletes": "delete", "deleting": "delete", "deletion": "delete", "erase": "delete",
    "erased": "delete", "purged": "purge", "purges": "purge", "purging": "purge",
    "defaults": "default", "standard": "default",
    "begins": "start", "begin": "start", "started": "start",
    "allowance": "quota", "revocation": "revoke", "revoked": "revoke",
    "revokes": "revoke", "revoking": "revoke",
}

# Words that say nothing checkable: the product's name, talk about the documentation itself.
_OPTIONAL = frozenset({"kestrel", "hub", "documentation", "docs", "doc", "according", "mention", "mentioned", "state",
                       "states", "stated", "say", "says", "note", "noted", "answer", "question", "product",
                       "version", "versions", "release", "specifically", "exactly", "precisely"})
_EXTRA_STOP = frozenset("""
also just actually currently basically simply really however therefore thus overall generally
typically usually every whole yes ok okay please thanks thank well even still already yet etc eg ie
get gets got make makes made go goes like many much way ways thing things lot lots something anything
everything nothing within via around among across along toward towards onto upon whether whatever
whichever whoever need another come comes came coming happen happens happened seem seems quite rather
""".split())
_STOP = STOPWORDS | _EXTRA_STOP | frozenset({"cannot", "none", "nothing", "neither", "nobody", "never", "without"})

_UN_NOT_NEGATIONS = frozenset({"unlinked", "uninstalled", "unpinned", "unlocked", "unpacked", "unzipped", "under",
                               "understand", "understood", "unified", "united", "unmounted"})

_TIME_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800, "month": 2592000,
               "year": 31536000, "ms": 0.001, "millisecond": 0.001}
_UNITS = {
    "s": "second", "sec": "second", "secs": "second", "second": "second", "seconds": "second",
    "min": "minute", "mins": "minute", "minute": "minute", "minutes": "minute",
    "h": "hour", "hr": "hour", "hrs": "hour", "hour": "hour", "hours": "hour",
    "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
    "year": "year", "years": "year", "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
    "gb": "gb", "gigabyte": "gb", "gigabytes": "gb", "tb": "tb", "terabyte": "tb", "terabytes": "tb",
    "mb": "mb", "megabyte": "mb", "megabytes": "mb", "kb": "kb", "kilobyte": "kb", "kilobytes": "kb",
    "kb/s": "kb/s", "kbps": "kb/s", "mbit/s": "mbit/s", "mbps": "mbit/s", "%": "%",
    "usd": "usd", "dollar": "usd", "dollars": "usd", "character": "character", "characters": "character",
    "byte": "byte", "bytes": "byte", "vcpu": "vcpu", "times": "times", "x": "times",
}
_MONTHS = frozenset("january february march april may june july august september october november december "
                    "jan feb mar apr jun jul aug sep sept oct nov dec".split())
_MULTIPLIERS = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}

_NUMBER = re.compile(
    r"(?<![\w.])(?P<dollar>\$\s?)?(?P<num>\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)*)"
    r"(?P<tail>[A-Za-z]*)"
)
_AFTER_NUMBER = re.compile(r"\s*(?:-\s*)?(?P<unit>%|[A-Za-z]+(?:/s)?)")
_VERSION_SHAPE = re.compile(r"^\d\.\d$")
_NOT_PRODUCT_BEFORE = frozenset({"oauth", "saml", "tls", "kmip", "http", "https", "ssl", "python", "openid",
                                 "connect", "smb", "ipv", "php", "java"})
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:'[a-z]+)?|\d+[A-Za-z][A-Za-z0-9]*")
_SPECIFIC = re.compile(r"`([^`\n]{2,80})`"                      # code
                       r"|(?<![\w-])(--[a-z][a-z0-9-]+)"          # a command-line flag
                       r"|(?<![\w./~-])((?:[~/.]?[A-Za-z0-9]+)(?:[._/:~-]+[A-Za-z0-9*{}]+)+)")  # paths, ids
_CITATION = re.compile(r"\s*\[(?:[0-9a-f]{6,}|[A-Za-z]*chunk[^\]\s]*|\d{1,2})\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`*])")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+•]\s+|\d+[.)]\s+|>\s*)")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    word = word.lower().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    word = word.strip("'")
    word = _SYNONYMS.get(word, word)
    if len(word) <= 3 or any(ch.isdigit() for ch in word):
        return word
    for suffix, replacement in (("ies", "y"), ("sses", "ss"), ("xes", "x"), ("ches", "ch"), ("shes", "sh")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            word = word[: -len(suffix)] + replacement
            break
    else:
        if word.endswith("s") and not word.endswith(("ss", "us", "is", "ous")):
            word = word[:-1]
    for suffix in ("ingly", "edly", "ing", "ed", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if word.endswith(("ation", "ition")) and len(word) > 7:
        word = word[:-3]
    elif word.endswith("ion") and len(word) > 6 and word[-4] in "st":
        word = word[:-3]
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    word = _SYNONYMS.get(word, word)
    if word.endswith("ity") and len(word) > 7:
        return word[:6] + "ty"  # "availability" is not "available"
    return word[:6]


def _normalise(text: str) -> str:
    text = text.replace("’", "'").replace("“", '"').replace("”", '"').replace("–", "-").replace("—", " - ")
    text = text.replace("**", "").replace("→", " to ")
    for pattern, replacement in _PHRASES:
        text = pattern.sub(replacement, text)
    text = _NUMBER_WORD.sub(lambda m: str(_NUMBER_WORDS[m.group(1).lower()]), text)
    text = re.sub(r"\b(\d+)-(second|minute|hour|day|week|month|year)\b", r"\1 \2", text, flags=re.IGNORECASE)
    return text


def _words(text: str) -> list[str]:
    """Stemmed content words of (normalised) text, in order, numbers left out."""
    out = []
    for token in _WORD.findall(text):
        low = token.lower()
        if low in _STOP or low in _OPTIONAL or (len(low) < 2 and low != "%"):
            continue
        if re.fullmatch(r"\d+(?:gb|tb|mb|kb|ms|s|h|m)", low):
            continue
        if _is_un_word(low):
            low = low[2:]
        stem = _stem(low)
        if stem in _STOP or stem in _OPTIONAL or len(stem) < 2:
            continue
        out.append(stem)
    return out


@dataclass(frozen=True)
class Quantity:
    value: str
    unit: str | None      # canonical unit, "time" for durations (value in seconds), None for a bare number
    raw: str
    context: frozenset[str] = field(default=frozenset(), compare=False)  # the words around it: its role

    def matches(self, other: Quantity) -> bool:
        """Same value, and the same unit where both give one ("15 GB" == "15GB", "60 minutes" == "1 hour",
        "60 days" matches a bare "60"); a price only matches a price ("$18" is not "18 users")."""
        if self.value != other.value:
            return False
        if self.unit == other.unit:
            return True
        if "usd" in (self.unit, other.unit):
            return False
        return self.unit is None or other.unit is None


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6f}".rstrip("0")


def _quantities(text: str) -> tuple[list[Quantity], list[tuple[int, str]]]:
    """Quantities of normalised text, and the product-version-shaped numbers with their offsets."""
    out: list[Quantity] = []
    version_like: list[tuple[int, str]] = []
    for match in _NUMBER.finditer(text):
        tail = match.group("tail")
        raw = match.group("num")
        if tail and re.match(r"[A-Za-z]+\d", text[match.start("tail"):match.start("tail") + len(tail) + 1]):
            continue  # an identifier such as 22H2
        if tail and tail.lower() not in _UNITS and tail.lower() not in _MULTIPLIERS and tail.lower() not in ("x",):
            if not re.fullmatch(r"(?:st|nd|rd|th)", tail.lower()):
                continue  # 1a2b: part of an identifier
        value_text = raw.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw) else raw
        unit_word = tail.lower() if tail else None
        rest = text[match.end():]
        if unit_word is None:
            after = _AFTER_NUMBER.match(rest)
            if after:
                unit_word = after.group("unit").lower()
                rest = rest[after.end():]
        multiplier = 1
        if unit_word in _MULTIPLIERS:
            multiplier = _MULTIPLIERS[unit_word]
            after = _AFTER_NUMBER.match(rest)
            unit_word = after.group("unit").lower() if after else None
        unit = _UNITS.get(unit_word) if unit_word else None
        if unit_word in _MONTHS and not re.fullmatch(r"\d{4}", raw):
            unit = "date"
        if match.group("dollar"):
            unit = "usd"
        if re.fullmatch(r"\d+(?:\.\d+)?", value_text):
            number = float(value_text) * multiplier
            if unit in _TIME_UNITS:
                value, unit = _fmt(number * _TIME_UNITS[unit]), "time"
            elif multiplier != 1:
                value = _fmt(number)
            else:
                value = value_text
        else:
            value = value_text
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value_text):
            unit = "date"
        elif re.fullmatch(r"\d{1,2}:\d{2}", value_text):
            unit = "clock"
        if _VERSION_SHAPE.match(value_text) and unit is None:
            before = re.findall(r"[A-Za-z]+", text[max(0, match.start() - 12):match.start()])
            after_name = before and before[-1].lower() in _NOT_PRODUCT_BEFORE  # OAuth 2.0, TLS 1.3
            if not after_name and not text[:match.start()].lower().endswith("pre-"):
                version_like.append((match.start(), value_text))
                unit = "version"
        before = re.split(r"[.;:|()\n,]", text[max(0, match.start() - 80):match.start()])[-1]
        after = re.split(r"[.;:|()\n,]", text[match.end():match.end() + 80])[0]
        context = [*_WORD.findall(before)[-4:], *_WORD.findall(after)[:4]]
        out.append(Quantity(value, unit, raw, frozenset(w for t in context for w in _words(t))))
    return out, version_like


def _specifics(text: str) -> list[str]:
    """Identifiers, paths, code and file names, lowercased, as they must appear in a source."""
    out = []
    for match in _SPECIFIC.finditer(text):
        token = (match.group(1) or match.group(2) or match.group(3) or "").strip().strip(".,;:").lower()
        if not token:
            continue
        if match.group(3):
            parts = [p for p in re.split(r"[._/:~-]+", token) if p]
            has_digit = any(ch.isdigit() for ch in token)
            codey = "_" in token or "/" in token or "~" in token or (
                "." in token and all(len(p) >= 2 for p in parts) and not re.fullmatch(r"[\d.]+", token))
            if not (has_digit or codey) or re.fullmatch(r"[\d.,:-]+", token):
                continue
            if has_digit and not codey and re.fullmatch(r"[a-z]+-\d+(?:-[a-z]+)?|\d+-[a-z]+", token):
                # KS-413, AES-256, 60-second: compare by words and numbers, not as one string
                continue
        out.append(re.sub(r"\s+", " ", token))
    return out


_NAMED_EXEMPT = frozenset("""
i yes no none all unlimited optional required note also however then if in on for the a an this that these it
you your we our they kestrel sync ok and or but so to with by
""".split())


def _named(sentence: str, first: bool = False) -> list[str]:
    """Capitalised words inside a sentence (not its first word unless ``first``): names of products,
    plans, places."""
    tokens = re.findall(r"[A-Za-z][A-Za-z0-9']*", re.sub(r"`[^`]*`", " ", sentence))
    out = []
    for position, token in enumerate(tokens):
        if (position == 0 and not first) or not token[0].isupper() or token.lower() in _NAMED_EXEMPT:
            continue
        if len(token) <= 1 or any(ch.isdigit() for ch in token):
            continue
        low = token.lower().split("'")[0]
        if low in _UNITS or low in _OPTIONAL or low in _STOP:
            continue
        stem = _stem(low)
        if stem and stem not in _STOP and stem not in _OPTIONAL:
            out.append(stem)
    return out


def _is_un_word(token: str) -> bool:
    """"unchanged", "unavailable": a negated participle or adjective."""
    return (token.startswith("un") and token.endswith(("ed", "able")) and len(token) > 6
            and token not in _UN_NOT_NEGATIONS)


def _table_cells(line: str) -> list[str]:
    return [c.strip().strip("`").strip() for c in line.strip().strip("|").split("|")]


def _is_separator(line: str) -> bool:
    return bool(re.fullmatch(r"[\s|:-]+", line)) and "-" in line


def _strip_citations(text: str, chunk_ids: Iterable[str] = ()) -> str:
    """The text without its citation markers ("[3f2a9c1e0b7d4e5f]"); a marker ends a sentence, since the
    reference system cites after each sentence it quotes, whatever its punctuation."""
    for chunk_id in chunk_ids:
        if chunk_id:
            text = text.replace(f"[{chunk_id}]", "\n")
    return _CITATION.sub("\n", text)


def _split_sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.split("\n"):
        if not line.strip() or line.strip().startswith(("```", "~~~")) or _is_separator(line.strip()):
            continue
        if line.strip().startswith("|"):
            out.append(" ".join(_table_cells(line)))
            continue
        cleaned = _MARKUP.sub("", line).replace("**", "").strip()
        for sentence in _SENTENCE_END.split(cleaned):
            for part in sentence.split(";"):
                part = part.strip()
                if len(re.findall(r"[A-Za-z0-9]", part)) >= 2:
                    out.append(part)
    return out


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
