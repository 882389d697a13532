/** An external link starts with http(s):, mailto: or tel:. */
export function isExternal(path: string): boolean {
  return /^(https?:|mailto:|tel:)/.test(path)
}

/** Only these two names count in the template's username helper. */
export function validUsername(name: string): boolean {
  return ['admin', 'editor'].includes(name.trim())
}

/**
 * The rule the server enforces on registration: 4–32 ASCII letters, digits, CJK ideographs or
 * _ - . @ (full-width forms and look-alike letters of other scripts are refused).
 */
export function validNewUsername(name: string): boolean {
  const chars = Array.from(name.trim())
  return (
    chars.length >= 4 && chars.length <= 32 && chars.every((c) => /^(?:[A-Za-z0-9_\-.@]|\p{Unified_Ideograph})$/u.test(c))
  )
}

/** Caps-lock state from a keyboard event, for password fields. */
export function capsLockOn(event: { getModifierState?: (key: 'CapsLock') => boolean }): boolean {
  return Boolean(event.getModifierState?.('CapsLock'))
}
