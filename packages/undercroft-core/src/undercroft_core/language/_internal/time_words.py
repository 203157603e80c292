"""Words the time-mention scanner reads: month names, weekdays, relative words, era markers."""

from __future__ import annotations

from typing import Final

# Gregorian month names (nominative and, where a date uses it, genitive), case-folded.
_MONTHS_BY_LANGUAGE: Final = {
    "en": "january february march april may june july august september october november december",
    "en_abbr": "jan feb mar apr may jun jul aug sep oct nov dec",
    "de": "januar februar märz april mai juni juli august september oktober november dezember",
    "nl": "januari februari maart april mei juni juli augustus september oktober november december",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "it": "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "pt": "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "sv": "januari februari mars april maj juni juli augusti september oktober november december",
    "tr": "ocak şubat mart nisan mayıs haziran temmuz ağustos eylül ekim kasım aralık",
    "ru": "января февраля марта апреля мая июня июля августа сентября октября ноября декабря",
    "ru_nom": "январь февраль март апрель май июнь июль август сентябрь октябрь ноябрь декабрь",
    "ar": "يناير فبراير مارس ابريل مايو يونيو يوليو اغسطس سبتمبر اكتوبر نوفمبر ديسمبر",
    "ar_levant": "كانون_الثاني شباط اذار نيسان ايار حزيران تموز اب ايلول تشرين_الاول تشرين_الثاني كانون_الاول",
}


def _months() -> dict[str, int]:
    table: dict[str, int] = {}
    for names in _MONTHS_BY_LANGUAGE.values():
        for number, name in enumerate(names.split(), start=1):
            table.setdefault(name.replace("_", " "), number)
    table["sept"] = 9
    return table


#: month name (case-folded, Arabic alefs unified) → month number
MONTHS: Final[dict[str, int]] = _months()

#: weekday name → date.weekday() number (English and Arabic)
WEEKDAYS: Final[dict[str, int]] = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
    "الاثنين": 0,
    "الثلاثاء": 1,
    "الاربعاء": 2,
    "الخميس": 3,
    "الجمعة": 4,
    "السبت": 5,
    "الاحد": 6,
}

#: words naming a day relative to the anchor → offset in days
RELATIVE_DAYS: Final[dict[str, int]] = {
    "today": 0,
    "yesterday": -1,
    "tomorrow": 1,
    "the day before yesterday": -2,
    "the day after tomorrow": 2,
    "heute": 0,
    "gestern": -1,
    "vorgestern": -2,
    "übermorgen": 2,
    "aujourd'hui": 0,
    "hier": -1,
    "avant-hier": -2,
    "demain": 1,
    "hoy": 0,
    "ayer": -1,
    "anteayer": -2,
    "oggi": 0,
    "ieri": -1,
    "domani": 1,
    "l'altro ieri": -2,
    "hoje": 0,
    "ontem": -1,
    "amanhã": 1,
    "anteontem": -2,
    "vandaag": 0,
    "gisteren": -1,
    "eergisteren": -2,
    "сегодня": 0,
    "вчера": -1,
    "завтра": 1,
    "позавчера": -2,
    "اليوم": 0,
    "امس": -1,
    "البارحة": -1,
    "غدا": 1,
    "غداً": 1,
    "اول امس": -2,
}

#: English count words for "two weeks ago"
NUMBER_WORDS: Final[dict[str, int]] = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a few": 3,
}

#: unit words (English and Arabic, singular, plural and Arabic dual) → (unit, count multiplier)
UNITS: Final[dict[str, tuple[str, int]]] = {
    "day": ("day", 1),
    "days": ("day", 1),
    "week": ("week", 1),
    "weeks": ("week", 1),
    "month": ("month", 1),
    "months": ("month", 1),
    "year": ("year", 1),
    "years": ("year", 1),
    "يوم": ("day", 1),
    "ايام": ("day", 1),
    "يومين": ("day", 2),
    "اسبوع": ("week", 1),
    "اسابيع": ("week", 1),
    "اسبوعين": ("week", 2),
    "شهر": ("month", 1),
    "اشهر": ("month", 1),
    "شهور": ("month", 1),
    "شهرين": ("month", 2),
    "سنة": ("year", 1),
    "سنوات": ("year", 1),
    "سنتين": ("year", 2),
    "عام": ("year", 1),
    "اعوام": ("year", 1),
    "عامين": ("year", 2),
}

#: "last/this/next" in English and Arabic (الماضي follows its noun) → step
STEPS: Final[dict[str, int]] = {
    "last": -1,
    "past": -1,
    "previous": -1,
    "this": 0,
    "next": 1,
    "coming": 1,
    "الماضي": -1,
    "الماضية": -1,
    "الفائت": -1,
    "الحالي": 0,
    "القادم": 1,
    "المقبل": 1,
    "القادمة": 1,
}

#: explicit era markers → calendar (a Japanese era name maps to "japanese" and is read apart)
ERA_MARKERS: Final[dict[str, str]] = {
    "พ.ศ.": "buddhist",
    "พ.ศ": "buddhist",
    "พุทธศักราช": "buddhist",
    "ค.ศ.": "gregorian",
    "ค.ศ": "gregorian",
    "คริสต์ศักราช": "gregorian",
    "ميلادي": "gregorian",
    "ميلادية": "gregorian",
    "公元": "gregorian",
    "西暦": "gregorian",
    "西元": "gregorian",
    "هـ": "hijri",
    "هجري": "hijri",
    "هجرية": "hijri",
    "民國": "minguo",
    "民国": "minguo",
    "ه.ش": "jalali",
    "هجری شمسی": "jalali",
}

#: Arabic nouns meaning "year" that, governing a number, confirm a bare م or ه
YEAR_NOUNS: Final = frozenset({"سنة", "سنه", "عام", "العام", "لعام", "بعام", "للعام", "السنة", "لسنة", "بسنة"})
